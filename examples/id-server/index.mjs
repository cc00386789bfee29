// `node index.mjs` (or `pnpm --filter @ids/example-id-server start`): runs the ID service until
// SIGINT or SIGTERM. PORT (default 8080; 0 picks a free port), HOST (default 127.0.0.1),
// IDS_MACHINE_ID and IDS_CLAIM_DIR come from the environment. It prints one line, "listening on <url> ...", once
// it accepts requests.
import { InvalidArgumentError } from '@ids/sonyflake';
import { startIdServer } from './server.mjs';

/**
 * PORT as a number.
 * @param {string | undefined} value
 * @throws {InvalidArgumentError} saying what was expected and received
 */
function portFrom(value) {
  if (value === undefined || value === '') return 8080;
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError(
      `PORT: expected an integer from 0 to 65535, received ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

let running;
try {
  running = await startIdServer({ port: portFrom(process.env.PORT), host: process.env.HOST || '127.0.0.1' });
} catch (error) {
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  console.error(`id-server could not start: ${error instanceof Error ? error.message : error}${cause}`);
  process.exit(1);
}
console.log(`listening on ${running.url} with machine ID ${running.sonyflake.machine}`);
console.log(running.machineIdFrom);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => console.log(`stopped on ${signal}`),
      (error) => {
        console.error('id-server did not close cleanly:', error);
        process.exitCode = 1;
      },
    );
  });
}
