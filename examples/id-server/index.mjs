// `node index.mjs` (or `pnpm --filter @ids/example-id-server start`): the ids-server command of
// @ids/server, configured by its flags and environment (PORT, HOST, IDS_MACHINE_ID, ...; see
// `node index.mjs --help`). It prints "listening on <url> ..." once it accepts requests and
// stops gracefully on SIGINT or SIGTERM.
import { serve } from '@ids/server';

process.exit(await serve(process.argv.slice(2), { command: 'id-server' }));
