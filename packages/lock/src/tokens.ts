// The seed's idempotency tokens: the server issues a token and keeps it in Redis; a client sends
// it with a call that must happen once; the server deletes the token first and does the work
// only if the delete found it. A missing token means a repeat (or a token never issued, or
// expired). Consuming before working means a crash mid-work loses the call rather than repeating
// it: at most once, never twice.
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError } from '@ids/engine';
import { checkInteger, invalidArgument, received, TIMER_MAX_MS } from '@ids/engine/internal';

/** What the tokens need of a Redis client (ioredis fits). */
export interface TokenClient {
  /** SET key value PX ms. */
  set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>;
  /** DEL: how many keys were deleted. */
  del(key: string): Promise<number>;
}

/** Tokens kept under `prefix` for `ttlMs` (default 1 hour). */
export interface TokenOptions {
  /** Where the tokens live. Default `ids:token`. */
  readonly prefix?: string;
  /** How long an unused token lives, in ms: an integer from 1 to 2,147,483,647. Default 3,600,000. */
  readonly ttlMs?: number;
}

const TOKEN = /^[0-9a-f]{32}$/;

/** Issues a fresh token (32 hex digits) and keeps it in Redis for `ttlMs`. */
export async function issueToken(client: TokenClient, options: TokenOptions = {}): Promise<string> {
  const ttlMs = checkInteger(options.ttlMs ?? 3_600_000, 'ttlMs', 1, TIMER_MAX_MS, invalidArgument, true);
  const token = randomBytes(16).toString('hex');
  await client.set(`${options.prefix ?? 'ids:token'}:${token}`, '1', 'PX', ttlMs);
  return token;
}

/**
 * Deletes the token, and says whether this call was the one that found it: true means do the
 * work now; false means a repeat (or an unknown or expired token): do not.
 * @throws InvalidArgumentError for a token that is not 32 hex digits.
 */
export async function consumeToken(
  client: TokenClient,
  token: unknown,
  options: TokenOptions = {},
): Promise<boolean> {
  if (typeof token !== 'string' || !TOKEN.test(token)) {
    throw new InvalidArgumentError(`expected 32 lowercase hex digits, received ${received(token)}`, {
      option: 'token',
    });
  }
  return (await client.del(`${options.prefix ?? 'ids:token'}:${token}`)) === 1;
}
