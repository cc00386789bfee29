#!/usr/bin/env node
// The `ids` executable: runs the command line and exits with its code.
import { guardOutput } from './io.js';
import { run } from './run.js';

// A reader that closed the pipe (`ids generate -n 1000000 | head`) is not an error; a full disk
// is one line and exit 1, never a stack.
const settle = guardOutput(process.stdout, process.stderr);

run(process.argv.slice(2)).then((code) => {
  process.exitCode = settle(code);
});
