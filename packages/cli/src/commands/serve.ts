import { serve as runServer, serverHelp } from '@ids/server';
import { type Command, EXIT_HELP } from '../command.js';

/** `ids serve`: the ID service of @ids/server, as `ids-server` runs it. */
export const serve: Command = {
  name: 'serve',
  summary: 'serve IDs over HTTP until SIGTERM/SIGINT (the ids-server of @ids/server)',
  help: serverHelp('ids serve', EXIT_HELP),
  run(args, io) {
    return runServer(args, { env: io.env, stdout: io.stdout, stderr: io.stderr, command: 'ids serve' });
  },
};
