// What the `ids` executable runs once bin/ids.js has turned on the compile cache: the command
// line, exiting with its code. A separate entry of the build, loaded by bin/ids.js alone; not API.
// `ids --version` is answered here, before the command line is loaded: it costs a bare `node`
// and little more (test/bench/cli.mjs), where loading the commands cost as much as generating.
import { VERSION, VERSION_FLAGS } from './version.js';

const args = process.argv.slice(2);

/** Loads io.js (the output guard) and the command line, runs `args`, and sets the exit code. */
function runCommandLine(): Promise<void> {
  return Promise.all([import('./io.js'), import('./run.js')]).then(async ([{ guardOutput }, { run }]) => {
    // A reader that closed the pipe (`ids generate -n 1000000 | head`) is not an error; a full
    // disk is one line and exit 1, never a stack.
    const settle = guardOutput(process.stdout, process.stderr);
    process.exitCode = settle(await run(args));
  });
}

if (args.length === 1 && VERSION_FLAGS.includes(args[0]!)) {
  // A failed write is reported as every command reports one; only then is io.js loaded.
  process.stdout.on('error', () => undefined);
  process.stdout.write(`${VERSION}\n`, (error) => {
    if (!error) return;
    void import('./io.js').then(({ reportOutputFailure }) => {
      process.exitCode = reportOutputFailure(error, process.stderr);
    });
  });
} else {
  void runCommandLine();
}
