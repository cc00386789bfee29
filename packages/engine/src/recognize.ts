// Reading an ID from text when nobody said how it was written. Text does not carry its encoding:
// `hello` is a base36 ID as far as the digits go. The CLI's `ids decompose` and the inspector page
// both read text through this rule, so the two read the same text the same way (and both judge
// the reading with the one rule of plausibility.ts).
import { ENCODING_NAMES, ENCODINGS, type EncodingName, readsFoldedLast } from './encodings.js';
import { AmbiguousIdError, InvalidIdError, received } from './errors.js';

/** An ID read from text of an encoding found by `decodeAnyId`. */
export interface DetectedId {
  /** The ID the text stands for. */
  readonly id: bigint;
  /** The encoding it was read in. */
  readonly encoding: EncodingName;
}

const DIGITS = /^[0-9]+$/;

/**
 * Reads an ID in whichever encoding it is written. Digits alone are always decimal (19 digits
 * with leading zeros: 'decimal-fixed'); otherwise the encodings that accept the text are tried,
 * and they must agree on one value. Text with upper-case letters is read as base36 only when no
 * other encoding reads it (`decodeId(text, 'base36')` reads either case).
 *
 * @throws InvalidIdError when no encoding accepts the text; AmbiguousIdError when several read
 * it as different IDs (its `candidates` list them: pass the encoding explicitly).
 */
export function decodeAnyId(text: string): DetectedId {
  if (typeof text !== 'string') {
    throw new InvalidIdError(`expected an ID as text, received ${received(text)}`);
  }
  if (DIGITS.test(text)) {
    const encoding = text.length === 19 && text[0] === '0' ? 'decimal-fixed' : 'decimal';
    return { id: ENCODINGS[encoding].decode(text), encoding };
  }
  const folded = ENCODING_NAMES.filter((name) => readsFoldedLast(name, text));
  let candidates = readings(
    text,
    ENCODING_NAMES.filter((name) => !folded.includes(name)),
  );
  if (candidates.length === 0) candidates = readings(text, folded);
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0) {
    throw new InvalidIdError(
      `expected an ID in one of the encodings ${ENCODING_NAMES.join(', ')}, received ${received(text)}, which none of them reads`,
    );
  }
  throw new AmbiguousIdError(
    `the ID ${JSON.stringify(text)} reads differently in ${candidates.map((c) => `${c.encoding} (${c.id})`).join(', ')}; name its encoding`,
    candidates,
  );
}

/** The distinct IDs `encodings` read `text` as, each with the first encoding that reads it so. */
function readings(text: string, encodings: readonly EncodingName[]): DetectedId[] {
  const candidates: DetectedId[] = [];
  for (const encoding of encodings) {
    try {
      const id = ENCODINGS[encoding].decode(text);
      if (!candidates.some((c) => c.id === id)) candidates.push({ id, encoding });
    } catch {
      // Not this encoding: the next one may read it.
    }
  }
  return candidates;
}

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
