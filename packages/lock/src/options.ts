import { InvalidArgumentError } from '@ids/engine';
import { checkInteger, invalidArgument, received, TIMER_MAX_MS } from '@ids/engine/internal';

/**
 * The one character a name may not hold: etcd keeps a lock's waiters under `<prefix><name>/`,
 * so a name `a/b` would sit among the waiters of `a`. Redis keys follow the same rule, so that a
 * name valid on one store is valid on the other.
 */
export const NAME_SEPARATOR = '/';
/** The longest name, in UTF-8 bytes: the name is part of several keys. */
export const MAX_NAME_BYTES = 512;
/** Default lease of a lock, in ms. */
export const DEFAULT_TTL_MS = 10_000;
/** The shortest lease: below it a keepalive interval would be a few ms. */
export const MIN_TTL_MS = 100;

/** What every acquire takes; each option is documented in the README. */
export interface AcquireOptions {
  /** The lease, in ms: an integer from 100 to 2,147,483,647 (Node's timer maximum). Default 10,000. */
  readonly ttlMs?: number;
  /** How long to wait for the lock, in ms: an integer from 0 to 2,147,483,647. Default: no limit. */
  readonly waitMs?: number;
  /** Ends a wait with LockAbortedError when it aborts. */
  readonly signal?: AbortSignal;
}

/** AcquireOptions as checked. */
export interface CheckedAcquire {
  readonly ttlMs: number;
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/** @throws InvalidArgumentError for anything but a non-empty string without `/` or control characters, at most 512 bytes. */
export function checkName(name: unknown): string {
  const expected = `expected a non-empty string of at most ${MAX_NAME_BYTES} UTF-8 bytes, without "${NAME_SEPARATOR}" or control characters`;
  if (
    typeof name !== 'string' ||
    name === '' ||
    Buffer.byteLength(name) > MAX_NAME_BYTES ||
    name.includes(NAME_SEPARATOR) ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    /[\u0000-\u001f\u007f]/.test(name)
  ) {
    const size = typeof name === 'string' ? ` (${Buffer.byteLength(name)} bytes)` : '';
    throw new InvalidArgumentError(`${expected}, received ${received(name)}${size}`, { option: 'name' });
  }
  return name;
}

/** Checks `ttlMs`, `waitMs` and `signal` once, before anything is sent. */
export function checkAcquire(options: AcquireOptions | undefined): CheckedAcquire {
  const o = options ?? {};
  const ttlMs = checkInteger(
    o.ttlMs ?? DEFAULT_TTL_MS,
    'ttlMs',
    MIN_TTL_MS,
    TIMER_MAX_MS,
    invalidArgument,
    true,
  );
  const waitMs =
    o.waitMs === undefined
      ? undefined
      : checkInteger(o.waitMs, 'waitMs', 0, TIMER_MAX_MS, invalidArgument, true);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new InvalidArgumentError(`expected an AbortSignal, received ${received(o.signal)}`, {
      option: 'signal',
    });
  }
  return { ttlMs, waitMs, signal: o.signal };
}

/**
 * The keeper's timing for a TTL, by the rule the machine-ID claims use: fence a fifth of the TTL
 * before the store could expire the lease, and keep alive three times in what is left, so that
 * two keepalives can fail before the deadline.
 */
export function leaseTiming(ttlMs: number, timeoutMs: number) {
  const marginMs = ttlMs / 5;
  return { ttlMs, marginMs, intervalMs: (ttlMs - marginMs) / 3, timeoutMs };
}

/** A store option in ms (`timeoutMs`, `pollMs`): an integer from 1 to 2,147,483,647. */
export function checkStoreMs(value: unknown, option: string): number {
  return checkInteger(value, option, 1, TIMER_MAX_MS, invalidArgument, true);
}
