import { IdsError } from '@ids/engine';

/**
 * A tag the store has no row (or key, or sequence) for: never created, or created in a store that
 * has since forgotten it (Redis without persistence). Create it once, explicitly
 * (`store.createTag` or `ids segment create-tag`), above the highest ID it ever issued.
 */
export class UnknownTagError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_UNKNOWN_TAG';
  override readonly name = 'UnknownTagError';
}

/**
 * `createTag` found the tag already in the store at or above the requested start: it is refused,
 * so a tag is never moved down and never served from an issued value again. A start above what
 * the store holds raises the tag instead.
 */
export class TagExistsError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_TAG_EXISTS';
  override readonly name = 'TagExistsError';
}

/** A tag that is not 1 to 64 of A-Z a-z 0-9 _ . - (starting with a letter or digit). */
export class InvalidTagError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_INVALID_TAG';
  override readonly name = 'InvalidTagError';
}

/** A step, or a step bound, that is not a whole number in range (see SegmentsOptions). */
export class StepOutOfRangeError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_STEP';
  override readonly name = 'StepOutOfRangeError';
}

/**
 * The store holds something no segment can be cut from: a negative or non-numeric `max_id`, a
 * value past 2^63 - 1, or a range that is empty or starts below 1. Nothing is issued from it.
 */
export class StoreCorruptError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_STORE_CORRUPT';
  override readonly name = 'StoreCorruptError';
}

/**
 * The store handed out a range at or below an ID this process already issued for the tag (a
 * store restored from an old backup, a Redis key re-registered too low). It is refused, so this
 * process never issues a duplicate; other processes cannot be protected from such a store.
 */
export class StoreWentBackwardsError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_STORE_BACKWARDS';
  override readonly name = 'StoreWentBackwardsError';
}

/** `nextIdSync()` found both buffers empty: it never waits on the store. Use `nextId()`, or retry. */
export class BufferEmptyError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_BUFFER_EMPTY';
  override readonly name = 'BufferEmptyError';
}

/** The database assigned a machine ID past the layout's machine field: refused, never wrapped. */
export class MachineIdExhaustedError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_MACHINE_ID_EXHAUSTED';
  override readonly name = 'MachineIdExhaustedError';
}

/** The Segments (or store) was closed. */
export class SegmentsClosedError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_CLOSED';
  override readonly name = 'SegmentsClosedError';
}

/**
 * A table that is not the shape the store reads (a `leaf_alloc` without Leaf's columns, a
 * ticket table whose name column has no unique key, so that `REPLACE INTO` would add rows
 * instead of replacing one). Nothing was written to it.
 */
export class StoreSchemaError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_STORE_SCHEMA';
  override readonly name = 'StoreSchemaError';
}

/**
 * Step/offset: this server's `auto_increment_increment` / `auto_increment_offset` do not match
 * the plan of N servers written to its database on first use (or the plan asked for), so its
 * IDs could land in another server's series. Refused before any ID is issued.
 */
export class StepOffsetPlanError extends IdsError {
  readonly code = 'ERR_IDS_SEGMENT_STEP_OFFSET_PLAN';
  override readonly name = 'StepOffsetPlanError';
}
