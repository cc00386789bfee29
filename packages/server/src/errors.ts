import { IdsError } from '@ids/engine';

/**
 * The server's configuration cannot work: a bad flag or environment value, or a rule it breaks
 * (a non-loopback address without an auth token). Raised before anything listens.
 */
export class ServerConfigError extends IdsError {
  /** Stable code: `ERR_IDS_SERVER_CONFIG`. */
  readonly code = 'ERR_IDS_SERVER_CONFIG';
  override readonly name = 'ServerConfigError';
}

/**
 * An answer to a request that cannot be served: its HTTP status, a stable code and a message
 * saying what was expected and what was received. Route handlers (a plugin's too) throw it; the
 * server turns it into `{ "error": { "code", "message" } }`.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    /** The HTTP status, 400 to 599. */
    readonly status: number,
    /** Stable code, e.g. `ERR_INVALID_COUNT`. */
    readonly code: string,
    message: string,
    /** Extra response headers (Allow, Retry-After, WWW-Authenticate). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A value quoted for an error message, cut short when long. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
}
