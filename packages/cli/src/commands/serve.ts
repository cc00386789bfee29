import { importOptional } from '@ids/engine/internal';
import { type Command, EXIT_HELP } from '../command.js';

// @ids/server is an optional peer of the CLI: its HTTP stack and metrics weigh more than the
// rest of `ids`, and only this command uses it.
const loadServer = <T>(load: () => Promise<T>) => importOptional('@ids/server', load, '`ids serve`');

/** `ids serve`: the ID service of @ids/server, as `ids-server` runs it. */
export const serve: Command = {
  name: 'serve',
  summary: 'serve IDs over HTTP until SIGTERM/SIGINT (the ids-server of @ids/server)',
  help: async () => (await loadServer(() => import('@ids/server/help'))).serverHelp('ids serve', EXIT_HELP),
  async run(args, io) {
    const { serve: runServer } = await loadServer(() => import('@ids/server'));
    return runServer(args, { env: io.env, stdout: io.stdout, stderr: io.stderr, command: 'ids serve' });
  },
};
