#!/usr/bin/env node
// The `ids` executable: runs the command line and exits with its code.
import { run } from './run.js';

// A reader that closed the pipe (`ids generate -n 1000000 | head`) is not an error worth a stack.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
