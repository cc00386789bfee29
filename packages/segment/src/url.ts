// Connection strings hold passwords. Every message about one shows it with the password masked,
// and no error raised while parsing one is kept as a cause: Node's URL error carries the whole
// string in its `input` field, so wrapping it would hand the password on to every log.
import { InvalidArgumentError } from '@ids/engine';
import { received } from '@ids/engine/internal';

/** The URL with its password replaced by `***`, for messages; an unparsable one masked by hand. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    // The parser takes everything before the authority's last '@' as user:password; masking
    // from the first ':' after the scheme up to the string's last '@' covers that and more.
    const scheme = text.indexOf('://');
    const start = scheme === -1 ? 0 : scheme + 3;
    const at = text.lastIndexOf('@');
    const colon = text.indexOf(':', start);
    return colon !== -1 && colon < at ? `${text.slice(0, colon + 1)}***${text.slice(at)}` : text;
  }
}

/** `received` for a value that may be a connection string: a string is shown redacted. */
export function receivedUrl(value: unknown): string {
  return received(typeof value === 'string' ? redactUrl(value) : value);
}

/**
 * Parses a connection string as the drivers do (WHATWG URL), refusing what they would throw on
 * later with the password in the error: a port past 65535 or not a number, a malformed host.
 * Nothing here dials.
 * @throws InvalidArgumentError (option `connectionString`) saying what `expected` describes,
 * the string shown redacted, with no cause.
 */
export function parseConnectionString(value: unknown, scheme: RegExp, expected: string): URL {
  const refuse = (why: string) =>
    new InvalidArgumentError(`expected ${expected}, received ${receivedUrl(value)}${why}`, {
      option: 'connectionString',
    });
  if (typeof value !== 'string' || !scheme.test(value)) throw refuse('');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse(': not a URL (a port from 1 to 65535, a host, reserved characters percent-encoded)');
  }
  for (const [part, text] of [
    ['user', url.username],
    ['password', url.password],
    ['path', url.pathname],
  ] as const) {
    try {
      decodeURIComponent(text);
    } catch {
      throw refuse(`: the ${part} is not valid percent-encoding`);
    }
  }
  if (url.port === '0') throw refuse(': the port must be 1 to 65535');
  return url;
}
