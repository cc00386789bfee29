// Text and byte forms of an ID, for both layouts (an encoding sees only the 63-bit integer).
// Every decoder accepts exactly what its encoder writes (hex, Crockford and base36 also accept the
// other letter case, and Crockford its I/L/O aliases) and rejects anything else with InvalidIdError.
import { InvalidArgumentError, InvalidIdError, received } from './errors.js';
import { type IdInput, MAX_ID, parseId } from './id.js';

/** The text encodings, by the name `encodeId`, `decodeId` and the CLI's `--format` take. */
export type EncodingName =
  | 'decimal'
  | 'decimal-fixed'
  | 'hex'
  | 'crockford32'
  | 'bwmarrin32'
  | 'bwmarrin58'
  | 'base36';

/** One text form of an ID: its encoder, its strict decoder, and how its texts compare. */
export interface IdEncoding {
  /** Its key in ENCODINGS. */
  readonly name: EncodingName;
  /** One line for help texts. */
  readonly description: string;
  /** Every ID has this many characters; undefined when the length varies (no leading zero digits). */
  readonly width: number | undefined;
  /** Encoded IDs compare as strings (`<` on JS strings, byte order in ASCII) exactly as the IDs compare. */
  readonly sortable: boolean;
  /** The ID as text. @throws InvalidIdError for an ID that `parseId` refuses. */
  encode(id: IdInput): string;
  /**
   * Reads text this encoding writes (hex, Crockford and base36 in either letter case, Crockford's
   * I, L and O as 1, 1 and 0).
   * @throws InvalidIdError for a wrong character, a wrong length or a value past 2^63 - 1.
   */
  decode(text: string): bigint;
}

interface PositionalSpec {
  readonly name: EncodingName;
  readonly description: string;
  /** Digits from 0 up. */
  readonly alphabet: string;
  readonly fixedWidth: boolean;
  /** Decode letters of either case (the alphabet is written in one). */
  readonly foldCase?: boolean;
  /**
   * decodeAnyId reads text in the other letter case as this encoding only when no encoding
   * reads it as written. Base36 folds case to read what Go reads, but nearly every bwmarrin58
   * text and many Crockford ones would then also read as a different base36 ID: guesses that
   * were unique before would turn ambiguous.
   */
  readonly guessFoldedLast?: boolean;
  /** Extra characters read as a digit (Crockford reads I and L as 1, O as 0). */
  readonly aliases?: Readonly<Record<string, string>>;
}

/**
 * A positional (radix) encoding. A 63-bit ID is split once into two parts that each fit a JS
 * number exactly (the low `chunk` digits and the rest), so encoding and decoding do two bigint
 * operations instead of one per digit.
 */
function positional(spec: PositionalSpec): IdEncoding {
  const { alphabet, name } = spec;
  const radix = alphabet.length;
  // The most digits whose value stays below 2^53.
  const chunk = Math.floor(53 / Math.log2(radix));
  const chunkPow = BigInt(radix) ** BigInt(chunk);
  const digitsOfMax = digits(Number(MAX_ID / chunkPow), 0) + digits(Number(MAX_ID % chunkPow), chunk);
  const maxWidth = digitsOfMax.length;
  const width = spec.fixedWidth ? maxWidth : undefined;
  const values = new Map<string, number>();
  for (let i = 0; i < radix; i++) {
    const c = alphabet[i]!;
    values.set(c, i);
    if (spec.foldCase) values.set(c.toLowerCase(), i).set(c.toUpperCase(), i);
  }
  for (const [alias, digit] of Object.entries(spec.aliases ?? {})) {
    for (const a of [alias.toLowerCase(), alias.toUpperCase()]) values.set(a, values.get(digit)!);
  }

  function digits(value: number, pad: number): string {
    let out = '';
    do {
      out = alphabet[value % radix]! + out;
      value = Math.floor(value / radix);
    } while (value > 0);
    return pad > 0 ? out.padStart(pad, alphabet[0]) : out;
  }

  function encode(input: IdInput): string {
    const id = parseId(input);
    const high = Number(id / chunkPow);
    const low = Number(id % chunkPow);
    const text = high === 0 ? digits(low, 0) : digits(high, 0) + digits(low, chunk);
    return width === undefined ? text : text.padStart(width, alphabet[0]);
  }

  const expected = width === undefined ? `1 to ${maxWidth}` : `exactly ${width}`;
  function decode(text: string): bigint {
    if (typeof text !== 'string') {
      throw new InvalidIdError(`expected a ${name} string, received ${received(text)}`);
    }
    if (text.length === 0 || text.length > maxWidth || (width !== undefined && text.length !== width)) {
      throw new InvalidIdError(
        `expected a ${name} ID of ${expected} characters, received ${received(text)} (${text.length} characters)`,
      );
    }
    if (width === undefined && text.length > 1 && values.get(text[0]!) === 0) {
      throw new InvalidIdError(
        `expected a ${name} ID without leading zero digits ("${alphabet[0]}"), received ${received(text)}`,
      );
    }
    let high = 0;
    let low = 0;
    const split = text.length - chunk;
    for (let i = 0; i < text.length; i++) {
      const value = values.get(text[i]!);
      if (value === undefined) {
        throw new InvalidIdError(
          `expected ${name} digits (${alphabet}), received ${received(text)} with ${JSON.stringify(text[i])} at position ${i + 1}`,
        );
      }
      if (i < split) high = high * radix + value;
      else low = low * radix + value;
    }
    const id = BigInt(high) * chunkPow + BigInt(low);
    if (id > MAX_ID) {
      throw new InvalidIdError(
        `expected a ${name} ID of at most 2^63 - 1 (${digitsOfMax}), received ${received(text)}, which is ${id}`,
      );
    }
    return id;
  }

  return Object.freeze({
    name,
    description: spec.description,
    width,
    // Fixed width over an alphabet in ascending code-unit order: string order is number order.
    sortable: width !== undefined && [...alphabet].every((c, i) => i === 0 || c > alphabet[i - 1]!),
    encode,
    decode,
  });
}

/** Crockford's base32 alphabet: digits and letters without I, L, O and U, in ascending ASCII order. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** bwmarrin/snowflake's base32 digits (the z-base-32 characters), 0 to 31. */
const BWMARRIN_32 = 'ybndrfg8ejkmcpqxot1uwisza345h769';
/** bwmarrin/snowflake's base58 digits: no 0, I, O or l; lower case before upper case. */
const BWMARRIN_58 = '123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ';

// The specs, in the order auto-detection reports candidates.
const SPECS: Readonly<Record<EncodingName, PositionalSpec>> = {
  decimal: {
    name: 'decimal',
    description: 'decimal digits, no leading zeros (JSON, logs, URLs)',
    alphabet: '0123456789',
    fixedWidth: false,
  },
  'decimal-fixed': {
    name: 'decimal-fixed',
    description: '19 decimal digits, zero-padded: sorts as text in ID order',
    alphabet: '0123456789',
    fixedWidth: true,
  },
  hex: {
    name: 'hex',
    description: '16 lower-case hex digits, zero-padded: sorts as text in ID order',
    alphabet: '0123456789abcdef',
    fixedWidth: true,
    foldCase: true,
  },
  crockford32: {
    name: 'crockford32',
    description: "13 characters of Crockford's base32, zero-padded: sorts as text in ID order",
    alphabet: CROCKFORD,
    fixedWidth: true,
    foldCase: true,
    aliases: { I: '1', L: '1', O: '0' },
  },
  bwmarrin32: {
    name: 'bwmarrin32',
    description: "bwmarrin/snowflake's Base32() for Go interop (does not sort)",
    alphabet: BWMARRIN_32,
    fixedWidth: false,
  },
  bwmarrin58: {
    name: 'bwmarrin58',
    description: "bwmarrin/snowflake's Base58() for Go interop (does not sort)",
    alphabet: BWMARRIN_58,
    fixedWidth: false,
  },
  base36: {
    name: 'base36',
    description: 'lower-case base36, as bwmarrin/snowflake Base36() and BigInt toString(36)',
    alphabet: '0123456789abcdefghijklmnopqrstuvwxyz',
    fixedWidth: false,
    // Go's ParseBase36 (strconv.ParseInt, base 36) reads either case, so text a Go service
    // upper-cased must read here too.
    foldCase: true,
    guessFoldedLast: true,
  },
};

// Each encoding is built the first time it is read, not at import: building all seven (digit
// maps, bigint powers) is CPU that every importer of the engine would pay at startup, although
// most never write an ID as text (test/bench/cold-start.mjs measures that startup).
const built = new Map<EncodingName, IdEncoding>();
function encodingFor(name: EncodingName): IdEncoding {
  let encoding = built.get(name);
  if (encoding === undefined) {
    encoding = positional(SPECS[name]);
    built.set(name, encoding);
  }
  return encoding;
}

/** Every text encoding, by name, in the order auto-detection reports candidates. */
export const ENCODINGS: Readonly<Record<EncodingName, IdEncoding>> = Object.freeze(
  Object.defineProperties(
    {} as Record<EncodingName, IdEncoding>,
    Object.fromEntries(
      (Object.keys(SPECS) as EncodingName[]).map((name) => [
        name,
        { enumerable: true, get: () => encodingFor(name) },
      ]),
    ),
  ),
);

/** The names of the text encodings. */
export const ENCODING_NAMES = Object.freeze(Object.keys(ENCODINGS) as EncodingName[]);

function encodingOf(name: unknown): IdEncoding {
  if (typeof name !== 'string' || !Object.hasOwn(ENCODINGS, name)) {
    throw new InvalidArgumentError(
      `encoding: expected one of ${ENCODING_NAMES.join(', ')}, received ${received(name)}`,
    );
  }
  return ENCODINGS[name as EncodingName];
}

/**
 * An ID as text. Default encoding: 'decimal'.
 * @throws InvalidIdError for an ID outside [0, 2^63 - 1]; InvalidArgumentError for an unknown encoding.
 */
export function encodeId(id: IdInput, encoding: EncodingName = 'decimal'): string {
  return encodingOf(encoding).encode(id);
}

/**
 * Reads an ID written in `encoding` (default 'decimal').
 * @throws InvalidIdError for a wrong character, a wrong length or a value past 2^63 - 1;
 * InvalidArgumentError for an unknown encoding.
 */
export function decodeId(text: string, encoding: EncodingName = 'decimal'): bigint {
  return encodingOf(encoding).decode(text);
}

/**
 * Whether text of an unknown encoding is read as `name` only when no other encoding reads it:
 * `name` is written in one letter case, reads the other too, and `text` has a letter in the
 * other case. (Read by the detection of recognize.ts, which tries every encoding.)
 */
export function readsFoldedLast(name: EncodingName, text: string): boolean {
  const spec = SPECS[name];
  return spec.guessFoldedLast === true && otherCase(spec, text);
}

/** Whether `text` has a letter in the case `spec`'s alphabet is not written in. */
function otherCase(spec: PositionalSpec, text: string): boolean {
  return /[a-z]/.test(spec.alphabet) ? /[A-Z]/.test(text) : /[a-z]/.test(text);
}

/** An ID as 8 bytes, big-endian (byte order = ID order, as in bwmarrin's IntBytes). */
export function idToBytes(id: IdInput): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, parseId(id));
  return bytes;
}

/**
 * Reads 8 big-endian bytes (a Uint8Array or Buffer).
 * @throws InvalidIdError for another length, a non-byte array, or the top bit set (past 2^63 - 1).
 */
export function idFromBytes(bytes: Uint8Array): bigint {
  if (!(bytes instanceof Uint8Array)) {
    throw new InvalidIdError(`expected 8 bytes in a Uint8Array, received ${received(bytes)}`);
  }
  if (bytes.length !== 8) {
    throw new InvalidIdError(`expected exactly 8 bytes, received ${bytes.length}`);
  }
  const id = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0);
  if (id > MAX_ID) {
    throw new InvalidIdError(
      `expected 8 bytes holding at most 2^63 - 1 (top bit 0), received ${id} (top bit set)`,
    );
  }
  return id;
}
