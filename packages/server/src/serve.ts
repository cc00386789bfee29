// What `ids-server` and `ids serve` run: configure, start, print where, wait for a signal, shut
// down gracefully, and answer with the exit code.
import { errorText } from '@ids/engine';
import packageJson from '../package.json';
import { parseServerArgs, serverHelp } from './config.js';
import { ServerConfigError } from './errors.js';
import { type IdServerOptions, startIdServer } from './server.js';

/** Where `serve` reads and writes; the defaults are the process's. */
export interface ServeIo {
  /** The environment. Default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Normal output. Default process.stdout. */
  readonly stdout?: {
    /** Writes a chunk of text. */
    write(text: string): unknown;
  };
  /** Errors. Default process.stderr. */
  readonly stderr?: {
    /** Writes a chunk of text. */
    write(text: string): unknown;
  };
  /** The command name for messages and help. Default `ids-server`. */
  readonly command?: string;
  /** Options added to what the flags give (plugins, a clock). */
  readonly extra?: IdServerOptions;
}

/** `<command>: <code>: <message>` (no code part for an error without one): how every error is printed. */
function errorLine(command: string, error: unknown): string {
  const tag = (error as { code?: unknown } | null)?.code;
  return `${command}: ${tag ? `${String(tag)}: ` : ''}${errorText(error)}`;
}

/**
 * Runs the server until SIGTERM or SIGINT, then shuts it down gracefully. Resolves with the exit
 * code: 0 stopped cleanly (or `--help`), 1 could not start or the shutdown was cut short, 2 bad
 * configuration. Prints `listening on <url>` once it accepts requests.
 */
export async function serve(args: readonly string[], io: ServeIo = {}): Promise<number> {
  const env = io.env ?? process.env;
  const out = io.stdout ?? process.stdout;
  const err = io.stderr ?? process.stderr;
  const command = io.command ?? 'ids-server';
  let running: Awaited<ReturnType<typeof startIdServer>>;
  try {
    const parsed = parseServerArgs(args, env);
    if (parsed.help) {
      out.write(serverHelp(command));
      return 0;
    }
    if (parsed.version) {
      out.write(`${packageJson.version}\n`);
      return 0;
    }
    // Background events (a claim lost, a record not written) as one line each, for the logs.
    const onError = (error: unknown) => {
      err.write(`${errorLine(command, error)}\n`);
    };
    running = await startIdServer({ onError, ...parsed.options, ...io.extra });
  } catch (error) {
    const code = error instanceof ServerConfigError ? 2 : 1;
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    err.write(`${errorLine(command, error)}${cause}\n`);
    return code;
  }
  const machines = running.pool.slots.map((slot) => slot.generator.machine).join(', ');
  out.write(
    `listening on ${running.url} with machine ID${running.pool.slots.length > 1 ? 's' : ''} ${machines}\n`,
  );
  for (const slot of running.pool.slots) out.write(`  slot ${slot.index}: ${slot.how}\n`);
  const signal = await new Promise<string>((resolve) => {
    const on = (name: string) => () => {
      process.off('SIGTERM', term);
      process.off('SIGINT', int);
      resolve(name);
    };
    const term = on('SIGTERM');
    const int = on('SIGINT');
    process.once('SIGTERM', term);
    process.once('SIGINT', int);
  });
  out.write(`${signal}: shutting down\n`);
  const { clean } = await running.shutdown();
  out.write(clean ? 'stopped\n' : 'stopped: the shutdown bound passed; connections were cut\n');
  return clean ? 0 : 1;
}
