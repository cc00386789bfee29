// Idempotency-Key, as the IETF draft (draft-ietf-httpapi-idempotency-key-header) and Stripe
// describe it: the first request with a key records "in progress" and, on completion, its status
// and body; a retry gets the stored response; a retry while the first still runs gets 409; the
// same key with another payload gets 422; a missing key where one is required gets 400. The
// "in progress" state is a lock on the key, so a crashed first request frees the key within
// the lock's TTL, and its records are written with the lock's fence, so a paused first request
// cannot overwrite what a later one stored.
import { createHash } from 'node:crypto';
import { checkInteger, invalidArgument, TIMER_MAX_MS } from '@ids/engine/internal';
import { type EvalClient, fencedSet } from './guard.js';
import type { Locks } from './locks.js';

/** A response to store and replay. */
export interface StoredResponse {
  /** The HTTP status. */
  readonly status: number;
  /** The body, as sent. */
  readonly body: string;
}

/** What `run` answers: the response to send, and how it came about. */
export interface IdempotentResponse extends StoredResponse {
  /**
   * `executed` (this request did the work), `replayed` (a stored response), `in-progress` (409),
   * `mismatch` (422: the key was used with another payload), `missing` (400: no key, or a
   * malformed one, where one is required).
   */
  readonly outcome: 'executed' | 'replayed' | 'in-progress' | 'mismatch' | 'missing';
}

/** What the records need of a Redis client (ioredis fits). */
export interface RecordClient extends EvalClient {
  /** GET: the value, or null. */
  get(key: string): Promise<string | null>;
  /** DEL: how many keys were deleted. */
  del(key: string): Promise<number>;
}

/** How `idempotencyKeys` keeps its records; each option has a default. */
export interface IdempotencyOptions {
  /** Where the records live. Default `ids:idempotency`. */
  readonly prefix?: string;
  /**
   * How long a completed response is replayed, in ms: an integer from 1 to 2,147,483,647.
   * Default 86,400,000 (24 hours, as Stripe keeps keys). A retry after that runs again.
   */
  readonly expiryMs?: number;
  /** The lease of the "in progress" lock, in ms (the work should end well within it). Default 30,000. */
  readonly ttlMs?: number;
  /** Whether a request without a key gets 400 (true, the default) or simply runs. */
  readonly required?: boolean;
}

interface Record {
  readonly state: 'in-progress' | 'done';
  readonly fingerprint: string;
  readonly status?: number;
  readonly body?: string;
}

/** The longest key accepted (the draft leaves it to the server; Stripe takes 255). */
const MAX_KEY = 255;

/** A payload's fingerprint: SHA-256 of its parts (say method, path and body), hex. */
export function fingerprint(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.length}:${part}`);
  return hash.digest('hex');
}

/** Idempotency-Key handling on Redis records and a lock per key. */
export function idempotencyKeys(client: RecordClient, locks: Locks, options: IdempotencyOptions = {}) {
  const prefix = options.prefix ?? 'ids:idempotency';
  const expiryMs = checkInteger(
    options.expiryMs ?? 86_400_000,
    'expiryMs',
    1,
    TIMER_MAX_MS,
    invalidArgument,
    true,
  );
  const ttlMs = options.ttlMs ?? 30_000;
  const required = options.required ?? true;
  const problem = (
    status: number,
    outcome: IdempotentResponse['outcome'],
    detail: string,
  ): IdempotentResponse => ({
    status,
    outcome,
    body: JSON.stringify({ title: detail }),
  });

  async function read(key: string): Promise<Record | undefined> {
    const raw = await client.get(key);
    return raw === null ? undefined : (JSON.parse(raw) as Record);
  }

  /** The answer a record gives, or undefined when the work is still to do. */
  function answer(record: Record | undefined, print: string): IdempotentResponse | undefined {
    if (!record) return undefined;
    if (record.fingerprint !== print) {
      return problem(422, 'mismatch', 'this Idempotency-Key was used with a different request payload');
    }
    if (record.state === 'done') {
      return { status: record.status as number, body: record.body as string, outcome: 'replayed' };
    }
    return undefined;
  }

  return {
    /**
     * Runs `work` once per key: `key` is the Idempotency-Key header (undefined when absent),
     * `print` the payload's fingerprint. `work` gets the lock's signal: it aborts when the lock
     * can no longer be trusted, and the work should stop then. When `work` throws, nothing is
     * stored and the error is passed on: a retry runs again.
     */
    async run(
      key: string | undefined,
      print: string,
      work: (signal: AbortSignal) => Promise<StoredResponse>,
    ): Promise<IdempotentResponse> {
      if (key === undefined || key === '') {
        if (!required) return { ...(await work(new AbortController().signal)), outcome: 'executed' };
        return problem(400, 'missing', 'this request requires an Idempotency-Key header');
      }
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
      if (key.length > MAX_KEY || /[\u0000-\u001f\u007f]/.test(key)) {
        return problem(400, 'missing', `an Idempotency-Key is at most ${MAX_KEY} printable characters`);
      }
      const id = createHash('sha256').update(key).digest('hex');
      const recordKey = `${prefix}:${id}`;
      const early = answer(await read(recordKey), print);
      if (early) return early;
      const lock = await locks.tryAcquire(`${prefix}:${id}`, { ttlMs });
      if (!lock) {
        return (
          answer(await read(recordKey), print) ??
          problem(409, 'in-progress', 'a request with this Idempotency-Key is still being processed')
        );
      }
      try {
        // Another request may have completed between the first read and the lock.
        const late = answer(await read(recordKey), print);
        if (late) return late;
        const started: Record = { state: 'in-progress', fingerprint: print };
        await fencedSet(client, recordKey, lock.fence, JSON.stringify(started), expiryMs);
        let response: StoredResponse;
        try {
          response = await work(lock.signal);
        } catch (failure) {
          await client.del(recordKey);
          throw failure;
        }
        const done: Record = {
          state: 'done',
          fingerprint: print,
          status: response.status,
          body: response.body,
        };
        await fencedSet(client, recordKey, lock.fence, JSON.stringify(done), expiryMs);
        return { ...response, outcome: 'executed' };
      } finally {
        await lock.release();
      }
    },
  };
}
