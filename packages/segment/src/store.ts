import { InvalidArgumentError, MAX_ID } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { InvalidTagError, StoreCorruptError, TagExistsError } from './errors.js';
import { checkStep, STEP_LIMIT } from './step.js';

/** A range of IDs a store handed out: every integer from `first` to `last`, both included. */
export interface SegmentRange {
  /** The first ID of the range (1 or more). */
  readonly first: bigint;
  /** The last ID of the range (at least `first`, at most 2^63 - 1). */
  readonly last: bigint;
}

/**
 * Where segments come from: a row per tag advanced in one statement (PostgreSQL, PGlite), a
 * key advanced with INCRBY (Redis), or a sequence per database. Each adapter is a few lines over
 * this interface; write one for another store the same way.
 */
export interface SegmentStore {
  /** A short name for messages and benchmarks ("postgres", "pglite", "redis", ...). */
  readonly kind: string;
  /**
   * Creates `tag` so that its first ID is `after + 1`: the one way a tag comes into a store, an
   * operator's act run once (`ids segment create-tag`), never on every start. A tag the store
   * already holds is raised to `after` when `after` lies above everything it handed out, and
   * otherwise refused with TagExistsError: never moved down, so never served from an issued
   * value again. Atomic: of concurrent calls with one `after`, one succeeds.
   * Rejects with InvalidArgumentError for a bad `after` (see checkAfter).
   */
  createTag(tag: string, options: CreateTagOptions): Promise<void>;
  /**
   * Takes the next range of `tag`, about `step` IDs long (a store may hand out its own fixed
   * size instead). Atomic: two callers never receive overlapping ranges.
   * Rejects with UnknownTagError for a tag never registered, StoreCorruptError for a value no
   * range can be cut from; any other rejection is the store being unavailable.
   */
  allocate(tag: string, step: number): Promise<SegmentRange>;
  /** Closes what this store opened (a client it was given is left open). */
  close(): Promise<void>;
}

/** What `SegmentStore.createTag` takes. */
export interface CreateTagOptions {
  /**
   * The ID before the first: 0n for a new tag; for a tag a store forgot, at least the highest
   * ID it ever issued. From 0n to 2^63 - 2.
   */
  readonly after: bigint;
  /** The step recorded with the tag (SQL stores keep it beside max_id). Default 1000. */
  readonly step?: number;
}

/**
 * Checks `after` of createTag and returns it: a bigint from 0n to 2^63 - 2 (one ID must remain).
 * @throws InvalidArgumentError for anything else, never a rounded number.
 */
export function checkAfter(after: unknown): bigint {
  if (typeof after !== 'bigint' || after < 0n || after >= MAX_ID) {
    throw new InvalidArgumentError(
      `after: expected a bigint from 0n to ${MAX_ID - 1n}n (the ID before the first), received ${received(after)}`,
    );
  }
  return after;
}

/**
 * What a tag may be, in one place: `checkTag` tests it, and the server's OpenAPI document takes
 * its pattern and text from here. A tag becomes part of a Redis key or a sequence name, hence
 * the narrow alphabet.
 */
export const TAG_RULE: {
  /** What a tag must match (the server's OpenAPI tag parameter takes its source). */
  readonly pattern: RegExp;
  /** The rule in words, for messages and documents. */
  readonly text: string;
} = {
  pattern: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
  text: '1 to 64 characters of A-Z a-z 0-9 _ . - starting with a letter or digit',
};

/**
 * Checks a tag name and returns it (see TAG_RULE).
 * @throws InvalidTagError for anything else.
 */
export function checkTag(tag: unknown): string {
  if (typeof tag !== 'string' || !TAG_RULE.pattern.test(tag)) {
    throw new InvalidTagError(`tag: expected ${TAG_RULE.text}, received ${received(tag)}`);
  }
  return tag;
}

/** What a store does once the arguments of createTag and allocate were checked (see checkedOperations). */
export interface CheckedOperations {
  /** createTag with `tag` a valid name, `after` from 0n to 2^63 - 2, `step` from 1 to STEP_LIMIT (default 1000). */
  create(tag: string, after: bigint, step: number): Promise<void>;
  /** allocate with `tag` a valid name and `step` from 1 to STEP_LIMIT. */
  take(tag: string, step: number): Promise<SegmentRange>;
}

/**
 * A store's createTag and allocate over its own operations, with the arguments checked here:
 * once, and the same way for every store, whether it uses `step` or not, so a bad argument is
 * refused before any store is reached. Both reject (never throw) with InvalidTagError,
 * InvalidArgumentError (after, or options that are not an object) or StepOutOfRangeError.
 */
export function checkedOperations(
  operations: CheckedOperations,
): Pick<SegmentStore, 'createTag' | 'allocate'> {
  return {
    async createTag(tag, options) {
      checkTag(tag);
      if (typeof options !== 'object' || options === null) {
        throw new InvalidArgumentError(
          `createTag: expected options { after }, received ${received(options)}`,
        );
      }
      const after = checkAfter(options.after);
      return operations.create(tag, after, checkStep(options.step ?? 1000, 'step', 1, STEP_LIMIT));
    },
    async allocate(tag, step) {
      checkTag(tag);
      return operations.take(tag, checkStep(step, 'step', 1, STEP_LIMIT));
    },
  };
}

/** The refusal of createTag on a tag that already holds `held` (see TagExistsError). */
export function tagExists(where: string, held: bigint, after: bigint): TagExistsError {
  return new TagExistsError(
    `${where}: the tag exists and has handed out IDs up to ${held}; expected after above ${held} to raise it, received ${after}n. A tag is never moved down, so issued IDs are never served again`,
  );
}

/**
 * Reads a store's `max_id` strictly: a bigint, a safe integer, or a string of decimal digits,
 * from 0 to 2^63 - 1. Anything else is StoreCorruptError, never a guess.
 */
export function storedMaxId(value: unknown, where: string): bigint {
  let id: bigint | undefined;
  if (typeof value === 'bigint') id = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) id = BigInt(value);
  else if (typeof value === 'string' && /^-?[0-9]{1,20}$/.test(value)) id = BigInt(value);
  if (id === undefined) {
    throw new StoreCorruptError(
      `${where}: expected max_id to be a whole number from 0 to ${MAX_ID}, the store holds ${received(value)}`,
    );
  }
  if (id < 0n || id > MAX_ID) {
    throw new StoreCorruptError(
      `${where}: expected max_id from 0 to ${MAX_ID}, the store holds ${id}; nothing was issued from it`,
    );
  }
  return id;
}

/**
 * The range a `max_id += step` store handed out: (maxId - step, maxId]. A max_id that was
 * negative before the increment shows here as a range starting below 1.
 */
export function rangeEndingAt(maxId: bigint, step: number, where: string): SegmentRange {
  const first = maxId - BigInt(step) + 1n;
  if (first < 1n) {
    throw new StoreCorruptError(
      `${where}: max_id was ${first - 1n} before this allocation; expected 0 or more. Nothing was issued from it`,
    );
  }
  return { first, last: maxId };
}
