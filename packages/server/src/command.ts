// What `ids-server` and `ids serve` run: configure, start, log where, wait for a signal, drain
// and shut down gracefully, and answer with the exit code.
import { InvalidArgumentError, InvalidMachineIdError, MissingPackageError } from '@ids/engine';
import { AutoMachineIdError } from '@ids/machine-file';
import packageJson from '../package.json';
import { parseServerArgs, readLogSettings, serverHelp } from './config.js';
import { ServerConfigError } from './errors.js';
import type { ServerEvent } from './events.js';
import { createLog, errorFields, type ServerLog } from './log.js';
import { DEFAULT_DRAIN_MS, type IdServerOptions } from './options.js';
import { startIdServer } from './start.js';

/**
 * A failure of what was configured (exit 2), as it is reported: a bad flag or variable, a store
 * configured without its package installed, or a value the machine-ID chain refused
 * (IDS_MACHINE_ID, a store's address), reported as that typed error rather than the chain's
 * wrapper, as `ids` reports it. Undefined for any other failure.
 */
function configurationError(error: unknown): Error | undefined {
  const typed = (e: unknown): e is Error =>
    e instanceof ServerConfigError || e instanceof MissingPackageError || e instanceof InvalidMachineIdError;
  if (typed(error)) return error;
  const cause = error instanceof AutoMachineIdError ? error.cause : undefined;
  return typed(cause) || cause instanceof InvalidArgumentError ? cause : undefined;
}

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

/**
 * Runs the server until SIGTERM or SIGINT, then shuts it down gracefully. SIGTERM drains first
 * (`--drain`, default DEFAULT_DRAIN_MS: readiness 503, requests still served); SIGINT, or a
 * second signal during the drain, goes straight to closing. Resolves with the exit code: 0
 * stopped cleanly (or `--help`), 1 could not start or the shutdown was cut short, 2 bad
 * configuration. Logs `listening on <url>` once it accepts requests.
 */
export async function serve(args: readonly string[], io: ServeIo = {}): Promise<number> {
  const env = io.env ?? process.env;
  const out = io.stdout ?? process.stdout;
  const err = io.stderr ?? process.stderr;
  const command = io.command ?? 'ids-server';
  const log = createLog(readLogSettings(args, env), out, err, command);
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
    // Background errors (a record not written, a renewal that failed) as one line each.
    const onError = (error: unknown) => {
      const { msg, fields } = errorFields(error);
      log.error(msg, { event: 'error', ...fields });
    };
    // The end of a drain is worth a line; without a drain, `shutting down` already said it.
    let drained = false;
    const onEvent = (event: ServerEvent) => {
      if (event.kind === 'draining') drained = true;
      if (event.kind !== 'closing' || drained) logEvent(log, event);
    };
    running = await startIdServer({
      drainMs: DEFAULT_DRAIN_MS,
      onError,
      onEvent,
      ...parsed.options,
      ...io.extra,
    });
  } catch (error) {
    const configuration = configurationError(error);
    const code = configuration ? 2 : 1;
    const failure = configuration ?? error;
    const { msg, fields } = errorFields(failure);
    const cause =
      failure instanceof Error && failure.cause instanceof Error ? failure.cause.message : undefined;
    log.error(cause ? `${msg} (${cause})` : msg, {
      event: 'not-started',
      ...fields,
      ...(cause ? { cause } : {}),
      exitCode: code,
    });
    return code;
  }
  // The signal handlers go in before the start-up lines are written: a supervisor (or a test)
  // that sends SIGTERM as soon as it reads them must get the drain, not the default of dying at
  // once with no handler in place.
  const stopped = new Promise<{ clean: boolean }>((resolve, reject) => {
    let first: string | undefined;
    const on = (signal: 'SIGTERM' | 'SIGINT') => () => {
      if (first === undefined) {
        first = signal;
        log.info(`${signal}: shutting down`, { event: 'shutting-down', signal });
        const done = () => {
          process.off('SIGTERM', term);
          process.off('SIGINT', int);
        };
        running.shutdown({ drain: signal === 'SIGTERM' }).then(
          (result) => {
            done();
            resolve(result);
          },
          (error: unknown) => {
            done();
            reject(error);
          },
        );
      } else {
        // An operator who does not want to wait: the drain (if still under way) ends now.
        log.info(`${signal}: ending the drain`, { event: 'drain-cut', signal });
        void running.shutdown({ drain: false });
      }
    };
    const term = on('SIGTERM');
    const int = on('SIGINT');
    process.on('SIGTERM', term);
    process.on('SIGINT', int);
  });
  const slots = running.pool.slots;
  const machines = slots.map((slot) => slot.generator.machine);
  log.info(
    `listening on ${running.url} with machine ID${slots.length > 1 ? 's' : ''} ${machines.join(', ')}`,
    { event: 'listening', url: running.url, machineIds: machines },
  );
  for (const slot of slots) {
    // How the ID was chosen. From the `auto` chain, its trail follows: as lines in text, as
    // `ids machine-id --explain` prints it, and as the `step` and `trail` fields in JSON, whose
    // message stays one sentence a collector can group by.
    const [how, ...lines] = slot.how.split('\n');
    log.info(
      log.format === 'json'
        ? `slot ${slot.index}: ${how}`
        : `  slot ${slot.index}: ${how}${lines.map((line) => `\n    ${line}`).join('')}`,
      {
        event: 'machine-id',
        slot: slot.index,
        machineId: slot.generator.machine,
        ...(slot.trail.length > 0 ? { step: slot.trail.at(-1)?.step, trail: slot.trail } : {}),
      },
    );
  }
  const { clean } = await stopped;
  if (clean) log.info('stopped', { event: 'stopped', clean });
  else log.warn('stopped: the shutdown bound passed; connections were cut', { event: 'stopped', clean });
  return clean ? 0 : 1;
}

/** One line per server event. */
function logEvent(log: ServerLog, event: ServerEvent): void {
  switch (event.kind) {
    case 'claim-lost': {
      const { msg, fields } = errorFields(event.reason);
      log.warn(msg, { event: event.kind, slot: event.slot, machineId: event.machineId, ...fields });
      return;
    }
    case 'claim-recovered':
      log.info(
        `slot ${event.slot}: issuing again under machine ID ${event.machineId} (the claim on ${event.previousMachineId} was lost)`,
        {
          event: event.kind,
          slot: event.slot,
          machineId: event.machineId,
          previousMachineId: event.previousMachineId,
        },
      );
      return;
    case 'draining':
      log.info(`draining for ${event.drainMs} ms: readiness answers 503, requests are still served`, {
        event: event.kind,
        drainMs: event.drainMs,
      });
      return;
    case 'closing':
      log.info('closing: no new connections; requests in flight finish', { event: event.kind });
      return;
    case 'request': {
      const ms = Math.round(event.durationMs * 1000) / 1000;
      log.info(`${event.method} ${event.url} ${event.status} ${ms} ms ${event.remoteAddress ?? '-'}`, {
        event: event.kind,
        method: event.method,
        url: event.url,
        route: event.route,
        status: event.status,
        durationMs: ms,
        remoteAddress: event.remoteAddress,
      });
      return;
    }
  }
}
