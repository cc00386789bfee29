// What the `ids` executable runs once bin/ids.js has turned on the compile cache: the command
// line, exiting with its code. A separate entry of the build, loaded by bin/ids.js alone; not API.
import { guardOutput } from './io.js';
import { run } from './run.js';

// A reader that closed the pipe (`ids generate -n 1000000 | head`) is not an error; a full disk
// is one line and exit 1, never a stack.
const settle = guardOutput(process.stdout, process.stderr);

run(process.argv.slice(2)).then((code) => {
  process.exitCode = settle(code);
});
