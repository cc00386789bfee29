import { describe, expect, it } from 'vitest';
import { encodeId } from '../src/encodings.js';
import { AmbiguousIdError, InvalidIdError } from '../src/errors.js';
import { recognizeId } from '../src/recognize.js';

// The example ID of Discord's API reference: 2016-04-30T11:18:25.796Z as Discord reads it.
const DISCORD_ID = 175928847299117063n;

function refusal(text: string): AmbiguousIdError {
  try {
    recognizeId(text);
  } catch (error) {
    expect(error).toBeInstanceOf(AmbiguousIdError);
    return error as AmbiguousIdError;
  }
  throw new Error(`${text} was read`);
}

describe('recognizeId: text is an ID only where its form leaves no doubt', () => {
  it('reads digits as decimal, and 19 with a leading zero as decimal-fixed, saying why', () => {
    expect(recognizeId('175928847299117063')).toEqual({
      id: DISCORD_ID,
      encoding: 'decimal',
      why: 'digits are read as decimal',
    });
    expect(recognizeId('0000000000000000042')).toMatchObject({ id: 42n, encoding: 'decimal-fixed' });
  });

  it('reads the fixed-width forms no other encoding reads: 16 hex digits, 13 Crockford characters', () => {
    expect(recognizeId(encodeId(DISCORD_ID, 'hex'))).toEqual({
      id: DISCORD_ID,
      encoding: 'hex',
      why: 'no encoding but hex reads 16 characters like these',
    });
    expect(recognizeId(encodeId(DISCORD_ID, 'crockford32'))).toMatchObject({
      id: DISCORD_ID,
      encoding: 'crockford32',
    });
  });

  it('does not take a word for an ID: "hello" is base36 only when base36 is chosen', () => {
    for (const word of ['hello', 'world']) {
      const error = refusal(word);
      expect(error.code).toBe('ERR_IDS_AMBIGUOUS_ID');
      expect(error.candidates).toEqual([{ encoding: 'base36', id: BigInt(Number.parseInt(word, 36)) }]);
      expect(error.message).toBe(
        `"${word}" is not read as an ID until its encoding is chosen: only base36 reads it (as ${Number.parseInt(word, 36)}), and base36 reads ordinary words too`,
      );
    }
    // A bwmarrin base58 ID is as much a word to the eye: it is read once bwmarrin58 is chosen.
    expect(refusal('4jgmnx8Js8A').candidates).toEqual([{ encoding: 'bwmarrin58', id: 1428076403798048768n }]);
  });

  it('lists every encoding that reads text several encodings read differently', () => {
    expect(refusal('abc').candidates.map((c) => c.encoding)).toEqual(['bwmarrin32', 'bwmarrin58', 'base36']);
    expect(refusal('abc').message).toMatch(
      /^"abc" is not read as an ID until its encoding is chosen: it reads as bwmarrin32 /,
    );
  });

  it('refuses text no encoding reads with InvalidIdError', () => {
    expect(() => recognizeId('not-an-id')).toThrow(InvalidIdError);
  });
});
