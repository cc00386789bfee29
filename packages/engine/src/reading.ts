// Reading an ID from text when nobody said how it was written. Text does not carry its encoding,
// nor an ID its layout: `hello` is a base36 ID as far as the digits go, and a Discord ID is also
// a believable Sonyflake one from 2017. These two rules are the ones the CLI's `ids decompose`
// and the inspector page both use, so the two read the same text the same way.
import { type DetectedId, decodeAnyId, ENCODINGS } from './encodings.js';
import { AmbiguousIdError } from './errors.js';
import { toTimeIn } from './id.js';
import type { Layout } from './layout.js';

/** An ID read from text without a chosen encoding, and why that encoding. */
export interface RecognizedId extends DetectedId {
  /** Why the text can only be this encoding, for people. */
  readonly why: string;
}

/**
 * Reads text as an ID only where its form leaves no doubt: digits are decimal (19 with a leading
 * zero, decimal-fixed), and a fixed-width form (16 hex digits, 13 Crockford base32 characters)
 * is read when no other encoding reads the text. The variable-width letter encodings (base36,
 * bwmarrin32, bwmarrin58) read ordinary words, so text only they read is not taken for an ID
 * until its encoding is chosen (`decodeId`).
 *
 * @throws InvalidIdError when no encoding reads the text; AmbiguousIdError when it is not an ID
 * unless an encoding is chosen (its `candidates` are every encoding that reads it, with the ID).
 */
export function recognizeId(text: string): RecognizedId {
  let found: DetectedId;
  try {
    found = decodeAnyId(text);
  } catch (error) {
    if (!(error instanceof AmbiguousIdError)) throw error;
    throw new AmbiguousIdError(
      `${JSON.stringify(text)} is not read as an ID until its encoding is chosen: it reads as ${error.candidates.map((c) => `${c.encoding} ${c.id}`).join(', ')}`,
      error.candidates,
    );
  }
  const { encoding } = found;
  if (encoding === 'decimal') return { ...found, why: 'digits are read as decimal' };
  if (encoding === 'decimal-fixed') {
    return { ...found, why: '19 digits with a leading zero are read as decimal-fixed' };
  }
  if (ENCODINGS[encoding].width !== undefined) {
    return { ...found, why: `no encoding but ${encoding} reads ${text.length} characters like these` };
  }
  throw new AmbiguousIdError(
    `${JSON.stringify(text)} is not read as an ID until its encoding is chosen: only ${encoding} reads it (as ${found.id}), and ${encoding} reads ordinary words too`,
    [found],
  );
}

/** How far past the clock an ID's time may lie: the clocks of the hosts that made it disagree by less. */
export const FUTURE_SLACK_MS = 60_000;

/**
 * Why `id` is not believable as an ID of `layout` at `nowMs`, or undefined when it is: it fits
 * the layout, and its time lies between the layout's epoch and `nowMs` + FUTURE_SLACK_MS.
 */
export function implausibility(layout: Layout, id: bigint, nowMs: number): string | undefined {
  if (id > layout.maxId) {
    const width = layout.timeBits + layout.sequenceBits + layout.machineBits;
    return `it has bits set above the ${width} bits the layout uses`;
  }
  if (layout.epochMs > nowMs + FUTURE_SLACK_MS) {
    return `today is before the layout's epoch (${new Date(layout.epochMs).toISOString()}): no ID of it can exist yet`;
  }
  const time = toTimeIn(layout, id);
  if (time.getTime() > nowMs + FUTURE_SLACK_MS) return `its time, ${time.toISOString()}, is in the future`;
  return undefined;
}
