import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeId,
  ENCODING_NAMES,
  ENCODINGS,
  type EncodingName,
  encodeId,
  idFromBytes,
  idToBytes,
} from '../src/encodings.js';
import { AmbiguousIdError, InvalidArgumentError, InvalidIdError } from '../src/errors.js';
import { MAX_ID } from '../src/id.js';
import { decodeAnyId } from '../src/recognize.js';

// The vectors of bwmarrin/snowflake's TestParseBase32 and TestParseBase58.
const BWMARRIN_BASE32_TEXT = 'b8wjm1zroyyyy';
const BWMARRIN_BASE32_ID = 1427970479175499776n;
const BWMARRIN_BASE58_TEXT = '4jgmnx8Js8A';
const BWMARRIN_BASE58_ID = 1428076403798048768n;

/** IDs biased to the edges: 0, 1, 2^63 - 1, all-ones low bits, powers of two, and anything. */
const anyId = fc.oneof(
  fc.constantFrom(0n, 1n, MAX_ID, MAX_ID - 1n, 2n ** 53n, 2n ** 53n - 1n),
  fc.bigInt({ min: 0n, max: MAX_ID }),
  fc.bigInt({ min: 0n, max: 2n ** 41n - 1n }).map((t) => (t << 22n) | 0x3fffffn),
  fc.integer({ min: 0, max: 62 }).map((b) => 1n << BigInt(b)),
);

describe('bwmarrin/snowflake interop', () => {
  it('reads and writes the base32 vector', () => {
    expect(decodeId(BWMARRIN_BASE32_TEXT, 'bwmarrin32')).toBe(BWMARRIN_BASE32_ID);
    expect(encodeId(BWMARRIN_BASE32_ID, 'bwmarrin32')).toBe(BWMARRIN_BASE32_TEXT);
  });

  it('reads and writes the base58 vector', () => {
    expect(decodeId(BWMARRIN_BASE58_TEXT, 'bwmarrin58')).toBe(BWMARRIN_BASE58_ID);
    expect(encodeId(BWMARRIN_BASE58_ID, 'bwmarrin58')).toBe(BWMARRIN_BASE58_TEXT);
  });

  it.each([
    ['base32 in capitals', 'B8WJM1ZROYYYY', 'bwmarrin32'],
    ['base32 with l', 'b8wjm1zroyyyl', 'bwmarrin32'],
    ['base32 with v', 'b8wjm1zroyyyv', 'bwmarrin32'],
    ['base32 with 2', 'b8wjm1zroyyy2', 'bwmarrin32'],
    ['base58 with 0', '0jgmnx8Js8A', 'bwmarrin58'],
    ['base58 with I', 'Ijgmnx8Js8A', 'bwmarrin58'],
    ['base58 with O', 'Ojgmnx8Js8A', 'bwmarrin58'],
    ['base58 with l', 'ljgmnx8Js8A', 'bwmarrin58'],
  ] as const)('rejects %s, as Go does', (_name, text, encoding) => {
    expect(() => decodeId(text, encoding)).toThrow(InvalidIdError);
    expect(() => decodeId(text, encoding)).toThrow(/at position \d+/);
  });

  it('8 bytes are big-endian, as IntBytes writes them', () => {
    // 1427970479175499776 = 0x13d12b95c9000000
    expect([...idToBytes(BWMARRIN_BASE32_ID)]).toEqual([0x13, 0xd1, 0x2b, 0x95, 0xc9, 0x00, 0x00, 0x00]);
    expect([...idToBytes(MAX_ID)]).toEqual([0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
  });
});

describe('fixed widths', () => {
  it.each([
    ['decimal-fixed', 0n, '0000000000000000000'],
    ['decimal-fixed', MAX_ID, '9223372036854775807'],
    ['hex', 0n, '0000000000000000'],
    ['hex', MAX_ID, '7fffffffffffffff'],
    ['crockford32', 0n, '0000000000000'],
    ['crockford32', MAX_ID, '7ZZZZZZZZZZZZ'],
    ['crockford32', 32n, '0000000000010'],
    ['decimal', MAX_ID, '9223372036854775807'],
    ['decimal', 0n, '0'],
    ['base36', MAX_ID, '1y2p0ij32e8e7'],
    ['bwmarrin32', 0n, 'y'],
    ['bwmarrin58', 0n, '1'],
  ] as const)('%s writes %s as %s', (encoding, id, text) => {
    expect(encodeId(id, encoding)).toBe(text);
    expect(decodeId(text, encoding)).toBe(id);
  });

  it('reports the widths and which encodings sort', () => {
    const table = Object.fromEntries(
      ENCODING_NAMES.map((n) => [n, [ENCODINGS[n].width, ENCODINGS[n].sortable]]),
    );
    expect(table).toEqual({
      decimal: [undefined, false],
      'decimal-fixed': [19, true],
      hex: [16, true],
      crockford32: [13, true],
      bwmarrin32: [undefined, false],
      bwmarrin58: [undefined, false],
      base36: [undefined, false],
    });
  });
});

describe('parsers reject bad input with InvalidIdError', () => {
  const bad: [string, EncodingName, string, RegExp][] = [
    ['2^63 in decimal', 'decimal', '9223372036854775808', /at most 2\^63 - 1 .*which is 9223372036854775808/],
    ['20 digits', 'decimal', '12345678901234567890', /1 to 19 characters/],
    ['a leading zero', 'decimal', '0123', /without leading zero digits/],
    ['a sign', 'decimal', '-1', /"-" at position 1/],
    ['an empty string', 'decimal', '', /1 to 19 characters, received "" \(string\) \(0 characters\)/],
    ['18 padded digits', 'decimal-fixed', '000000000000000001', /exactly 19 characters/],
    ['2^63 in padded decimal', 'decimal-fixed', '9223372036854775808', /at most 2\^63 - 1/],
    ['15 hex digits', 'hex', '7ffffffffffffff', /exactly 16 characters/],
    ['2^63 in hex', 'hex', '8000000000000000', /which is 9223372036854775808/],
    ['a hex g', 'hex', '000000000000000g', /"g" at position 16/],
    ['a Crockford U', 'crockford32', '000000000000U', /"U" at position 13/],
    ['2^63 in Crockford', 'crockford32', '8000000000000', /at most 2\^63 - 1 \(7ZZZZZZZZZZZZ\)/],
    ['14 bwmarrin32 digits', 'bwmarrin32', 'bbbbbbbbbbbbbb', /1 to 13 characters/],
    ['a leading bwmarrin32 zero', 'bwmarrin32', 'yb', /without leading zero digits \("y"\)/],
    ['past 2^63 in bwmarrin58', 'bwmarrin58', 'ZZZZZZZZZZZ', /at most 2\^63 - 1/],
    ['2^63 in base36', 'base36', '1y2p0ij32e8e8', /which is 9223372036854775808/],
    ['2^63 in upper-case base36', 'base36', '1Y2P0IJ32E8E8', /which is 9223372036854775808/],
    ['a leading base36 zero, upper case', 'base36', '0A', /without leading zero digits \("0"\)/],
    ['a plus sign in base36', 'base36', '+2Y8', /"\+" at position 1/],
    ['a minus sign in base36', 'base36', '-2Y8', /"-" at position 1/],
    ['empty base36', 'base36', '', /1 to 13 characters/],
  ];

  it.each(bad)('%s', (_name, encoding, text, message) => {
    expect(() => decodeId(text, encoding)).toThrow(InvalidIdError);
    expect(() => decodeId(text, encoding)).toThrow(message);
  });

  // Go's ParseBase36 is strconv.ParseInt(text, 36, 64), which reads letters of either case.
  it('base36 reads upper and mixed case as the same ID as lower case, as Go does', () => {
    expect(decodeId('2y8', 'base36')).toBe(3824n);
    expect(decodeId('2Y8', 'base36')).toBe(3824n);
    expect(decodeId('1Y2P0IJ32E8E7', 'base36')).toBe(MAX_ID);
    expect(decodeId('1y2P0iJ32e8E7', 'base36')).toBe(MAX_ID);
    expect(decodeId('AUKDADXVWDMO', 'base36')).toBe(1427970479175499776n);
    // What it writes stays lower case.
    expect(encodeId(3824n, 'base36')).toBe('2y8');
  });

  it('decodeAnyId reads upper-case base36 when no encoding reads the text as written', () => {
    // O is no bwmarrin58 digit, and the text is too short for hex or Crockford: only base36 reads it.
    expect(decodeAnyId('AUKDADXVWDMO')).toEqual({ id: 1427970479175499776n, encoding: 'base36' });
    // Text an encoding reads as written keeps that reading: base58 (mixed case is its mark) and
    // Crockford (written in upper case), which base36 would read as other IDs.
    expect(decodeAnyId('2Y8')).toEqual({ id: decodeId('2Y8', 'bwmarrin58'), encoding: 'bwmarrin58' });
    expect(decodeAnyId(BWMARRIN_BASE58_TEXT)).toEqual({ id: BWMARRIN_BASE58_ID, encoding: 'bwmarrin58' });
    expect(decodeAnyId('17M9BJQ4G0000')).toEqual({ id: 1427970479175499776n, encoding: 'crockford32' });
  });

  it('a number or another type is refused, not coerced', () => {
    expect(() => decodeId(12 as never, 'decimal')).toThrow(
      /expected a decimal string, received 12 \(number\)/,
    );
    expect(() => encodeId(12 as never, 'hex')).toThrow(InvalidIdError);
    expect(() => encodeId(-1n, 'hex')).toThrow(/from 0 to 2\^63 - 1/);
  });

  it('an unknown encoding name is an InvalidArgumentError listing the names', () => {
    expect(() => encodeId(1n, 'base64' as never)).toThrow(InvalidArgumentError);
    expect(() => decodeId('1', 'toString' as never)).toThrow(/expected one of decimal, decimal-fixed, hex/);
  });

  it('hex and Crockford read either case; Crockford reads I and L as 1, O as 0', () => {
    expect(decodeId('7FFFFFFFFFFFFFFF', 'hex')).toBe(MAX_ID);
    expect(decodeId('7zzzzzzzzzzzz', 'crockford32')).toBe(MAX_ID);
    expect(decodeId('00000000000iL', 'crockford32')).toBe(33n);
    expect(decodeId('0000000000O10', 'crockford32')).toBe(32n);
  });

  it('bytes: wrong length, wrong type and the top bit set are refused', () => {
    expect(() => idFromBytes(new Uint8Array(7))).toThrow(/exactly 8 bytes, received 7/);
    expect(() => idFromBytes([0, 0, 0, 0, 0, 0, 0, 1] as never)).toThrow(/Uint8Array, received an array/);
    expect(() => idFromBytes(Uint8Array.of(0x80, 0, 0, 0, 0, 0, 0, 0))).toThrow(/top bit set/);
    // A Buffer is a Uint8Array, also at an offset into a larger pool.
    expect(idFromBytes(Buffer.from('ff0000000000000001', 'hex').subarray(1))).toBe(1n);
  });
});

describe('properties', () => {
  it('every encoding round-trips every ID, within its width', () => {
    fc.assert(
      fc.property(anyId, fc.constantFrom(...ENCODING_NAMES), (id, name) => {
        const text = encodeId(id, name);
        expect(decodeId(text, name)).toBe(id);
        const { width } = ENCODINGS[name];
        if (width !== undefined) expect(text).toHaveLength(width);
      }),
      { numRuns: 5000 },
    );
  });

  it('bytes round-trip and compare like the IDs', () => {
    fc.assert(
      fc.property(anyId, anyId, (a, b) => {
        expect(idFromBytes(idToBytes(a))).toBe(a);
        expect(Math.sign(Buffer.compare(idToBytes(a), idToBytes(b)))).toBe(Math.sign(Number(a - b)));
      }),
      { numRuns: 2000 },
    );
  });

  const sortable = ENCODING_NAMES.filter((n) => ENCODINGS[n].sortable);

  it('the sortable encodings compare as strings exactly as the IDs compare', () => {
    expect(sortable).toEqual(['decimal-fixed', 'hex', 'crockford32']);
    fc.assert(
      fc.property(anyId, anyId, fc.constantFrom(...sortable), (a, b, name) => {
        const [x, y] = [encodeId(a, name), encodeId(b, name)];
        expect(x < y).toBe(a < b);
        expect(x === y).toBe(a === b);
      }),
      { numRuns: 5000 },
    );
  });

  it('a sorted list of encoded IDs is the list of sorted IDs', () => {
    fc.assert(
      fc.property(
        fc.array(anyId, { minLength: 2, maxLength: 50 }),
        fc.constantFrom(...sortable),
        (ids, name) => {
          const byText = ids.map((id) => encodeId(id, name)).sort();
          const byId = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((id) => encodeId(id, name));
          expect(byText).toEqual(byId);
        },
      ),
    );
  });

  it('the others do not sort, which is why they say so', () => {
    // One counterexample each: a smaller ID whose text sorts after a larger one.
    expect(encodeId(9n, 'decimal') > encodeId(10n, 'decimal')).toBe(true);
    expect(encodeId(35n, 'base36') > encodeId(36n, 'base36')).toBe(true);
    expect(encodeId(0n, 'bwmarrin32') > encodeId(1n, 'bwmarrin32')).toBe(true);
    expect(encodeId(9n, 'bwmarrin58') > encodeId(34n, 'bwmarrin58')).toBe(true);
  });
});

describe('decodeAnyId', () => {
  it('finds the encoding of the bwmarrin vectors and of each fixed-width form', () => {
    expect(decodeAnyId(BWMARRIN_BASE32_TEXT)).toEqual({ id: BWMARRIN_BASE32_ID, encoding: 'bwmarrin32' });
    expect(decodeAnyId(BWMARRIN_BASE58_TEXT)).toEqual({ id: BWMARRIN_BASE58_ID, encoding: 'bwmarrin58' });
    const id = BWMARRIN_BASE32_ID;
    expect(decodeAnyId(encodeId(id, 'hex'))).toEqual({ id, encoding: 'hex' });
    expect(decodeAnyId(encodeId(id, 'crockford32'))).toEqual({ id, encoding: 'crockford32' });
  });

  it('reads digits alone as decimal, zero-padded 19 digits as decimal-fixed', () => {
    expect(decodeAnyId('1427970479175499776')).toEqual({ id: BWMARRIN_BASE32_ID, encoding: 'decimal' });
    expect(decodeAnyId('0000000000000000042')).toEqual({ id: 42n, encoding: 'decimal-fixed' });
    // 16 digits are also 16 hex digits; decimal wins by rule.
    expect(decodeAnyId('1000000000000000').id).toBe(10n ** 15n);
  });

  it('refuses text that encodings read as different IDs, listing them', () => {
    let error: unknown;
    try {
      decodeAnyId('abc');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AmbiguousIdError);
    expect((error as AmbiguousIdError).code).toBe('ERR_IDS_AMBIGUOUS_ID');
    expect((error as AmbiguousIdError).candidates.map((c) => c.encoding)).toEqual([
      'bwmarrin32',
      'bwmarrin58',
      'base36',
    ]);
    expect((error as Error).message).toMatch(/reads differently in bwmarrin32 \(\d+\), bwmarrin58/);
  });

  it('refuses text no encoding reads', () => {
    expect(() => decodeAnyId('not-an-id')).toThrow(InvalidIdError);
    expect(() => decodeAnyId('not-an-id')).toThrow(/which none of them reads/);
    expect(() => decodeAnyId('')).toThrow(InvalidIdError);
  });
});
