// `ids-server`'s log lines. text: for a person at a terminal, as the command always printed
// them (events on stdout, problems on stderr prefixed with the command's name). json: one object
// a line with `time`, `level` and `msg` first, then the event's fields, for a log collector.
// Both write info to stdout and warn/error to stderr, and leave out the lines below the level
// asked for (`--log-level`).
import { errorText } from '@ids/engine/internal';
import { LOG_LEVELS, type LogFormat, type LogLevel, type LogSettings } from './config.js';

/** Where a log writes. */
export interface LogStream {
  write(text: string): unknown;
}

/** Fields a line carries besides its message (JSON only; text shows the message alone). */
export type LogFields = Readonly<Record<string, unknown>>;

/** The command's log. */
export interface ServerLog {
  /** The format of its lines. */
  readonly format: LogFormat;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** The stable code of an error, when it has one. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return code ? String(code) : undefined;
}

/** An error as a line's message (`CODE: message`) and fields (`code`, `error`). */
export function errorFields(error: unknown): { msg: string; fields: LogFields } {
  const code = codeOf(error);
  const message = errorText(error);
  return {
    msg: code ? `${code}: ${message}` : message,
    fields: { ...(code ? { code } : {}), error: message },
  };
}

/** A log writing `format` lines of `level` and above; `command` prefixes text problems. */
export function createLog(
  { format, level }: LogSettings,
  out: LogStream,
  err: LogStream,
  command: string,
): ServerLog {
  const least = LOG_LEVELS.indexOf(level);
  const line =
    format === 'json'
      ? (level: string, msg: string, fields?: LogFields) => {
          // A text line's indentation means nothing in a JSON one.
          const head = { time: new Date().toISOString(), level, msg: msg.trimStart() };
          // head, fields, head again: the head's keys come first and a field cannot change them.
          return `${JSON.stringify({ ...head, ...fields, ...head })}\n`;
        }
      : (level: string, msg: string) => (level === 'info' ? `${msg}\n` : `${command}: ${msg}\n`);
  const writer = (to: LogStream, at: LogLevel) =>
    LOG_LEVELS.indexOf(at) < least
      ? () => {}
      : (msg: string, fields?: LogFields) => to.write(line(at, msg, fields));
  return { format, info: writer(out, 'info'), warn: writer(err, 'warn'), error: writer(err, 'error') };
}
