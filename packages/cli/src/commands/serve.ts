import { MissingPackageError } from '@ids/engine';
import { importOptional } from '@ids/engine/internal';
import { type Command, EXIT_HELP } from '../command.js';

// @ids/server is an optional peer of the CLI: its HTTP stack and metrics weigh more than the
// rest of `ids`, and only this command uses it.
const loadServer = <T>(load: () => Promise<T>) => importOptional('@ids/server', load, '`ids serve`');

/**
 * `ids serve --help`: the help of ids-server (its flags are declared there), or, without
 * @ids/server installed, what the command is and what to install: help never fails for want of
 * the package it describes. `load` is the import of @ids/server/help (tests pass a failing one).
 */
export async function serveHelp(
  load: () => Promise<typeof import('@ids/server/help')> = () => import('@ids/server/help'),
): Promise<string> {
  try {
    return (await loadServer(load)).serverHelp('ids serve', EXIT_HELP);
  } catch (error) {
    if (!(error instanceof MissingPackageError)) throw error;
    return `Usage: ids serve [options]

Serves IDs over HTTP until SIGTERM/SIGINT: ids-server of @ids/server under another name, with
the same flags. @ids/server is not installed here: install it (an optional peer of @ids/cli) to
run this command and to see its flags; its README lists them too.

Options:
  -h, --help            this text

${EXIT_HELP}
`;
  }
}

/** `ids serve`: the ID service of @ids/server, as `ids-server` runs it. */
export const serve: Command = {
  name: 'serve',
  summary: 'serve IDs over HTTP until SIGTERM/SIGINT (the ids-server of @ids/server)',
  help: () => serveHelp(),
  async run(args, io) {
    const { serve: runServer } = await loadServer(() => import('@ids/server'));
    return runServer(args, { env: io.env, stdout: io.stdout, stderr: io.stderr, command: 'ids serve' });
  },
};
