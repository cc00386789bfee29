import { InvalidArgumentError } from '@ids/engine';
import { checkInteger, closestName, invalidArgument, received, TIMER_MAX_MS } from '@ids/engine/internal';

/**
 * The one character a name may not hold: etcd keeps a lock's waiters under `<prefix><name>/`,
 * ZooKeeper a lock's nodes under `<prefix>/<name>/`, so a name `a/b` would sit among the waiters
 * of `a`. Redis keys follow the same rule, so that a name valid on one store is valid on all.
 */
export const NAME_SEPARATOR = '/';
/** The longest name, in UTF-8 bytes: the name is part of several keys. */
export const MAX_NAME_BYTES = 512;

/** One range of characters a name may not hold. */
export interface RefusedRange {
  /** The first UTF-16 code unit refused. */
  readonly from: number;
  /** The last one, included. */
  readonly to: number;
  /** What they are, as the rule's text names them. */
  readonly what: string;
}

/**
 * The characters no name may hold, as UTF-16 code unit ranges, with why: the one declaration of
 * the name rule, read by `checkName` and by the README (test/name-rule.test.ts checks that the
 * README states `nameRuleText()`). The ranges after the control characters are what ZooKeeper's
 * PathUtils.validatePath refuses in a path (it checks Java's UTF-16 units, so an emoji, two
 * surrogates, is refused too); the rule is one for every store, so a name moves between stores.
 */
export const NAME_REFUSED: readonly RefusedRange[] = [
  { from: 0x0000, to: 0x001f, what: 'C0 control characters' },
  { from: 0x007f, to: 0x009f, what: 'DEL and the C1 control characters' },
  {
    from: 0xd800,
    to: 0xf8ff,
    what: 'surrogates, so every character past U+FFFF such as emoji, and the private use area',
  },
  { from: 0xfff0, to: 0xffff, what: 'specials and noncharacters' },
];
/** Whole names no store can take: `.` and `..` are not ZooKeeper path segments. */
export const NAME_RESERVED: readonly string[] = ['.', '..'];

const hex = (n: number) => `U+${n.toString(16).toUpperCase().padStart(4, '0')}`;
const REFUSED = new RegExp(
  `[${NAME_REFUSED.map(({ from, to }) => `\\u${from.toString(16).padStart(4, '0')}-\\u${to.toString(16).padStart(4, '0')}`).join('')}]`,
);

/** The name rule in words, as the README and every refusal state it. */
export function nameRuleText(): string {
  const ranges = NAME_REFUSED.map(({ from, to, what }) => `${hex(from)}-${hex(to)} (${what})`).join(', ');
  return `a non-empty string of at most ${MAX_NAME_BYTES} UTF-8 bytes, not ${NAME_RESERVED.map((n) => JSON.stringify(n)).join(' or ')}, without "${NAME_SEPARATOR}" or any of ${ranges}`;
}

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

/**
 * Checks a name against the one rule (NAME_REFUSED, NAME_RESERVED, NAME_SEPARATOR,
 * MAX_NAME_BYTES) before anything is sent to any store.
 * @throws InvalidArgumentError naming the first character at fault, by code point.
 */
export function checkName(name: unknown): string {
  let fault = '';
  if (typeof name === 'string' && name !== '') {
    const bad =
      REFUSED.exec(name) ?? (name.includes(NAME_SEPARATOR) ? { index: name.indexOf(NAME_SEPARATOR) } : null);
    if (bad) fault = ` (${hex(name.charCodeAt(bad.index))} at index ${bad.index})`;
    else if (NAME_RESERVED.includes(name)) fault = ' (a reserved name)';
    else if (Buffer.byteLength(name) > MAX_NAME_BYTES) fault = ` (${Buffer.byteLength(name)} bytes)`;
    else return name;
  }
  throw new InvalidArgumentError(`expected ${nameRuleText()}, received ${received(name)}${fault}`, {
    option: 'name',
  });
}

/**
 * Refuses anything but undefined or a plain object whose keys are all in `known`: a typo such as
 * `{ ttl: 5 }` would otherwise leave the default in force without a word.
 * @throws InvalidArgumentError naming the key, and the nearest known one.
 */
export function checkOptionKeys<T extends object>(options: unknown, known: readonly string[]): Partial<T> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError(`expected an options object or undefined, received ${received(options)}`, {
      option: 'options',
    });
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closestName(key, known);
    throw new InvalidArgumentError(
      `expected only ${known.join(', ')}, received the unknown option ${JSON.stringify(key)}${near ? ` (did you mean ${near}?)` : ''}`,
      { option: key },
    );
  }
  return options as Partial<T>;
}

/** The keys of AcquireOptions; tryAcquire takes only ttlMs. */
export const ACQUIRE_KEYS = ['ttlMs', 'waitMs', 'signal'] as const;

/** Checks `ttlMs`, `waitMs` and `signal` once, before anything is sent; undefined means the default, null is refused. */
export function checkAcquire(options: unknown, known: readonly string[] = ACQUIRE_KEYS): CheckedAcquire {
  const o = checkOptionKeys<AcquireOptions>(options, known);
  const ttlMs =
    o.ttlMs === undefined
      ? DEFAULT_TTL_MS
      : checkInteger(o.ttlMs, 'ttlMs', MIN_TTL_MS, TIMER_MAX_MS, invalidArgument, true);
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
