// From pasted text to IDs. The work is bounded whatever is pasted: only the first MAX_SHOWN IDs
// are decoded and drawn, the rest are counted, so 10,000 lines cost a split and a count.
import { AmbiguousIdError, decodeId, ENCODING_NAMES, type EncodingName, IdsError, MAX_ID } from '@ids/engine';
import { type DetectedId, recognizeId } from '@ids/engine/read';

/** How many IDs the page decodes and draws at once. */
export const MAX_SHOWN = 50;

/** One pasted ID, or why it is not one. */
export type Item =
  | {
      readonly line: number;
      readonly text: string;
      /** The ID it stands for. */
      readonly id: bigint;
      /** The encoding it was read in. */
      readonly encoding: EncodingName;
      /** Why that encoding, for people. */
      readonly why: string;
    }
  | {
      readonly line: number;
      readonly text: string;
      /** What is wrong with it, for people. */
      readonly error: string;
      /** The IDs it would be in the encodings that read it, when one is chosen; empty when none reads it. */
      readonly candidates: readonly DetectedId[];
    };

/** What the page makes of the input box. */
export interface Parsed {
  /** The first MAX_SHOWN tokens, decoded. */
  readonly items: readonly Item[];
  /** How many tokens the text holds in all. */
  readonly total: number;
}

/** Separators between IDs: white space, commas, semicolons; quotes around an ID are dropped. */
const SEPARATORS = /[\s,;]+/;
const QUOTES = /^["'`]+|["'`]+$/g;

/** Shortens what is echoed back in a message. */
export function shown(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 37)}...` : text);
}

/**
 * Decodes one token; with `encoding` 'auto' only where its form leaves no doubt (the engine's
 * recognizeId: digits, or a fixed-width form no other encoding reads). Never throws.
 */
export function decodeToken(text: string, encoding: EncodingName | 'auto', line: number): Item {
  const bad = (error: string, candidates: readonly DetectedId[] = []) => ({ line, text, error, candidates });
  // The engine's own messages cover these, but a person pasting "-5" or a 20-digit number wants
  // the range, not a list of encodings none of which reads it.
  if (/^[-−]\s*[0-9]+$/.test(text)) {
    return bad(`${shown(text)} is negative: an ID is a whole number from 0 to 2^63 - 1`);
  }
  if (/^[0-9]+$/.test(text) && (text.length > 40 || BigInt(text) > MAX_ID)) {
    return bad(
      `${shown(text)} is past 2^63 - 1 (${MAX_ID}), the largest ID: an ID has 63 bits below the sign`,
    );
  }
  try {
    if (encoding === 'auto') return { line, text, ...recognizeId(text) };
    return { line, text, id: decodeId(text, encoding), encoding, why: 'the encoding chosen above' };
  } catch (error) {
    if (error instanceof AmbiguousIdError) {
      const candidates = error.candidates as readonly DetectedId[];
      return bad(`${shown(text)} is not an ID unless you choose its encoding`, candidates);
    }
    if (error instanceof IdsError) return bad(error.message);
    return bad(`${shown(text)} could not be read: ${String(error)}`);
  }
}

/** Splits the input into tokens and decodes the first MAX_SHOWN of them. */
export function parseInput(input: string, encoding: EncodingName | 'auto' = 'auto'): Parsed {
  const items: Item[] = [];
  let total = 0;
  let line = 0;
  let start = 0;
  // Line by line with indexOf rather than split('\n'): no array of 10,000 strings for a count.
  while (start <= input.length) {
    const end = input.indexOf('\n', start);
    const text = input.slice(start, end < 0 ? input.length : end);
    line++;
    for (const raw of text.split(SEPARATORS)) {
      const token = raw.replace(QUOTES, '');
      if (token === '') continue;
      total++;
      if (items.length < MAX_SHOWN) items.push(decodeToken(token, encoding, line));
    }
    if (end < 0) break;
    start = end + 1;
  }
  return { items, total };
}

/** The encodings the page offers, 'auto' first. */
export const ENCODING_CHOICES: readonly (EncodingName | 'auto')[] = ['auto', ...ENCODING_NAMES];
