import { serverHelp } from '@ids/server/help';
import { type Command, EXIT_HELP } from '../command.js';

/** `ids serve`: the ID service of @ids/server, as `ids-server` runs it. */
export const serve: Command = {
  name: 'serve',
  summary: 'serve IDs over HTTP until SIGTERM/SIGINT (the ids-server of @ids/server)',
  help: serverHelp('ids serve', EXIT_HELP),
  async run(args, io) {
    // Loaded here, not on top: the server is most of what `ids` could load, and only this uses it.
    const { serve: runServer } = await import('@ids/server');
    return runServer(args, { env: io.env, stdout: io.stdout, stderr: io.stderr, command: 'ids serve' });
  },
};
