// Idempotency-Key, as the IETF draft (draft-ietf-httpapi-idempotency-key-header) and Stripe
// describe it: the first request with a key records "in progress" and, on completion, its status
// and body; a retry gets the stored response; a retry while the first still runs gets 409; the
// same key with another payload gets 422; a missing key where one is required gets 400. The
// "in progress" state is a lock on the key, so a crashed first request frees the key within
// the lock's TTL.
//
// A lock alone cannot keep one answer per key: a request paused past its lease (GC, SIGSTOP, a
// slow VM) wakes up after a retry took the key and ran. So every write and delete of a record
// carries the fence of the lock that ran the work and is refused once a newer fence touched the
// record (issue 34: a paused request's late write, and its late delete, each gave one key two
// answers). A request whose write is refused answers with what the record holds instead of its
// own result, so every answer a client can receive for one key carries the same body.
import { createHash } from 'node:crypto';
import { checkInteger, invalidArgument, TIMER_MAX_MS } from '@ids/engine/internal';
import type { EvalClient } from './guard.js';
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
   * `executed` (this request did the work and its response is the one stored for the key),
   * `replayed` (the stored response), `in-progress` (409: another request holds the key),
   * `mismatch` (422: the key was used with another payload), `missing` (400: no key, or a
   * malformed one, where one is required).
   */
  readonly outcome: 'executed' | 'replayed' | 'in-progress' | 'mismatch' | 'missing';
}

/** What the records need of a Redis client (ioredis fits). */
export interface RecordClient extends EvalClient {
  /** GET: the value, or null. */
  get(key: string): Promise<string | null>;
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

/**
 * The one way a record changes: KEYS[1] the record, KEYS[2] the last fence that touched it;
 * ARGV[1] the fence of the lock that ran the work, ARGV[2] what to do, ARGV[3] the record,
 * ARGV[4] the expiry in ms (of both keys). Refused when a newer fence touched the record (fences
 * compared as decimal strings, length then digits, as FENCED_SET does). `start` is also refused
 * over a completed record: a paused earlier holder whose late `done` landed between this holder's
 * lock and its start has answered, and this one must replay that answer, not run again. `drop`
 * deletes the record but keeps the fence, so that an older holder still paused cannot write
 * after it. Returns {1} done, or {0, the record or nothing} refused.
 */
const RECORD = `local function older(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local current = redis.call('GET', KEYS[1])
local stored = redis.call('GET', KEYS[2])
if stored and older(ARGV[1], stored) then return {0, current} end
if ARGV[2] == 'start' and current and cjson.decode(current).state == 'done' then return {0, current} end
if ARGV[2] == 'drop' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[4])
return {1}`;

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

  const parse = (raw: string | null | undefined): Record | undefined =>
    raw === null || raw === undefined ? undefined : (JSON.parse(raw) as Record);

  /**
   * Changes the record under `fence`: undefined when done, else the record as it stands (what a
   * newer holder, or a completed earlier one, left there).
   */
  async function change(
    recordKey: string,
    fence: bigint,
    action: 'start' | 'done' | 'drop',
    record?: Record,
  ): Promise<{ readonly record: Record | undefined } | undefined> {
    const reply = (await client.eval(
      RECORD,
      2,
      recordKey,
      `${recordKey}:fence`,
      fence.toString(),
      action,
      record === undefined ? '' : JSON.stringify(record),
      expiryMs,
    )) as [number, string?];
    return reply[0] === 1 ? undefined : { record: parse(reply[1]) };
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

  const inProgress = () =>
    problem(409, 'in-progress', 'a request with this Idempotency-Key is still being processed');

  return {
    /**
     * Runs `work` once per key: `key` is the Idempotency-Key header (undefined when absent),
     * `print` the payload's fingerprint. `work` gets the lock's signal: it aborts when the lock
     * can no longer be trusted, and the work should stop then. `executed` means this run's
     * response is the one the key's record holds. A run that a newer request overtook (it was
     * paused past the lock's lease and the newer one took the key) never answers with its own
     * response: it answers with what the record holds, `replayed` or 409 `in-progress` (409 too
     * when the record is empty, so that the retry runs again). When `work` throws, nothing is
     * stored and the error is passed on, and a retry runs again; a run overtaken meanwhile
     * answers with the record instead, when there is one.
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
      const early = answer(parse(await client.get(recordKey)), print);
      if (early) return early;
      const lock = await locks.tryAcquire(`${prefix}:${id}`, { ttlMs });
      if (!lock) return answer(parse(await client.get(recordKey)), print) ?? inProgress();
      try {
        const fence = lock.fence;
        // Refused: another request completed between the first read and the lock (replay it),
        // or this one was paused past its lease before starting and a newer holder runs (409).
        const refused = await change(recordKey, fence, 'start', { state: 'in-progress', fingerprint: print });
        if (refused) return answer(refused.record, print) ?? inProgress();
        let response: StoredResponse;
        try {
          response = await work(lock.signal);
        } catch (failure) {
          // Nothing of this run is stored, so a retry runs again; but the record is only this
          // run's to delete while no newer holder has touched it.
          const kept = await change(recordKey, fence, 'drop');
          if (kept === undefined || kept.record === undefined) throw failure;
          return answer(kept.record, print) ?? inProgress();
        }
        const done: Record = {
          state: 'done',
          fingerprint: print,
          status: response.status,
          body: response.body,
        };
        const lost = await change(recordKey, fence, 'done', done);
        if (lost === undefined) return { ...response, outcome: 'executed' };
        // A newer holder took the key while this run was paused: its answer (or its 409 while it
        // still runs) is the key's one answer; this run's body is never sent.
        return answer(lost.record, print) ?? inProgress();
      } finally {
        await lock.release();
      }
    },
  };
}
