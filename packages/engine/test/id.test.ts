import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  InvalidIdError,
  InvalidMachineIdError,
  InvalidSequenceError,
  OverTimeLimitError,
  StartTimeAheadError,
} from '../src/errors.js';
import {
  composeIn,
  composeMachineId,
  decomposeIn,
  formatId,
  idReplacer,
  MAX_ID,
  parseId,
  toTimeIn,
} from '../src/id.js';
import { defineLayout, type Layout, tickStartMs } from '../src/layout.js';
import { eachThrows } from './kit.js';
import { SONYFLAKE_SPEC, TWITTER_SPEC } from './layouts.js';

const sonyflake = defineLayout(SONYFLAKE_SPEC);

// The vector of the seed documents: time 1, sequence 1, machine 1.
const SEED_VECTOR = { time: 1, sequence: 1, machine: 1, id: 16_842_753n };

describe('compose and decompose', () => {
  it('composes the seed vector (time 1, sequence 1, machine 1) to 16842753', () => {
    const id = composeIn(
      sonyflake,
      tickStartMs(sonyflake, SEED_VECTOR.time),
      SEED_VECTOR.sequence,
      SEED_VECTOR.machine,
    );
    expect(id).toBe(SEED_VECTOR.id);
    expect(decomposeIn(sonyflake, SEED_VECTOR.id)).toEqual(SEED_VECTOR);
  });

  it('decomposes the all-ones ID into all-ones fields', () => {
    expect(decomposeIn(sonyflake, MAX_ID)).toEqual({
      id: MAX_ID,
      time: 2 ** 39 - 1,
      sequence: 255,
      machine: 65_535,
    });
    expect(toTimeIn(sonyflake, MAX_ID).toISOString()).toBe('2188-11-16T03:28:58.870Z');
  });

  it('checks compose arguments in Go order', () => {
    const start = sonyflake.epochMs;
    expect(() => composeIn(sonyflake, start - 1000, 0, 0)).toThrow(StartTimeAheadError);
    expect(() => composeIn(sonyflake, tickStartMs(sonyflake, 2 ** 39), 0, 0)).toThrow(OverTimeLimitError);
    expect(() => composeIn(sonyflake, start, 256, 0)).toThrow(InvalidSequenceError);
    expect(() => composeIn(sonyflake, start, 1.5, 0)).toThrow(/received 1.5/);
    expect(() => composeIn(sonyflake, start, 0, 65_536)).toThrow(InvalidMachineIdError);
    expect(() => composeIn(sonyflake, start, 0, -1)).toThrow(/0 to 65535 \(16 bits\), received -1/);
    expect(() => composeIn(sonyflake, new Date('nope'), 0, 0)).toThrow(InvalidArgumentError);
  });

  it('names the machine parts of a split machine field', () => {
    const twitter = defineLayout(TWITTER_SPEC);
    const id = composeIn(twitter, TWITTER_SPEC.epochMs + 5, 7, (17 << 5) | 30);
    expect(decomposeIn(twitter, id)).toEqual({
      id,
      time: 5,
      sequence: 7,
      machine: (17 << 5) | 30,
      parts: { datacenter: 17, worker: 30 },
    });
  });

  it("places the machine field above the sequence in Twitter's order", () => {
    const twitter = defineLayout(TWITTER_SPEC);
    // time 5 | machine 3 | sequence 7: (5 << 22) | (3 << 12) | 7
    const id = composeIn(twitter, 1288834974657 + 5, 7, 3);
    expect(id).toBe((5n << 22n) | (3n << 12n) | 7n);
    expect(decomposeIn(twitter, id)).toEqual({
      id,
      time: 5,
      sequence: 7,
      machine: 3,
      parts: { datacenter: 0, worker: 3 },
    });
    // All-ones low bits: both fields at their maximum.
    expect(decomposeIn(twitter, (1n << 22n) - 1n)).toMatchObject({ time: 0, sequence: 4095, machine: 1023 });
  });

  it('refuses IDs wider than a layout that uses fewer than 63 bits', () => {
    const small = defineLayout({ timeBits: 32, timeUnitMs: 10, sequenceBits: 4, machineBits: 4, epochMs: 0 });
    expect(() => decomposeIn(small, 1n << 40n)).toThrow(/at most 1099511627775 \(40 bits\)/);
  });
});

// Layouts with every field width the engine accepts, so the properties cover more than Sonyflake.
const anyLayout = fc
  .record({
    sequenceBits: fc.integer({ min: 0, max: 30 }),
    machineBits: fc.integer({ min: 0, max: 30 }),
    timeUnitMs: fc.integer({ min: 1, max: 1000 }),
    fieldOrder: fc.constantFrom('sequence-machine' as const, 'machine-sequence' as const),
  })
  .filter((l) => l.sequenceBits + l.machineBits <= 31)
  .map((l) =>
    defineLayout({ ...l, timeBits: Math.min(63 - l.sequenceBits - l.machineBits, 40), epochMs: 0 }),
  );

/** Field values biased to their extremes: 0, the all-ones maximum, and anything between. */
function fieldOf(max: number) {
  return fc.oneof(fc.constant(0), fc.constant(max), fc.integer({ min: 0, max }));
}

function fieldsOf(layout: Layout) {
  return fc.record({
    time: fieldOf(layout.tickLimit - 1),
    sequence: fieldOf(layout.maxSequence),
    machine: fieldOf(layout.maxMachine),
  });
}

describe('properties', () => {
  it('decompose(composeIn(fields)) gives back the fields, over the full Sonyflake ranges', () => {
    fc.assert(
      fc.property(fieldsOf(sonyflake), ({ time, sequence, machine }) => {
        const id = composeIn(sonyflake, tickStartMs(sonyflake, time), sequence, machine);
        expect(decomposeIn(sonyflake, id)).toEqual({ id, time, sequence, machine });
        expect(toTimeIn(sonyflake, id).getTime()).toBe(tickStartMs(sonyflake, time));
      }),
      { numRuns: 2000 },
    );
  });

  it('the same holds for every layout the engine accepts', () => {
    fc.assert(
      fc.property(
        anyLayout.chain((layout) => fc.tuple(fc.constant(layout), fieldsOf(layout))),
        ([layout, { time, sequence, machine }]) => {
          const id = composeIn(layout, tickStartMs(layout, time), sequence, machine);
          expect(id).toBeLessThanOrEqual(layout.maxId);
          expect(decomposeIn(layout, id)).toEqual({ id, time, sequence, machine });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('compose(decomposeIn(id)) gives back any ID, including all-ones low bits', () => {
    const ids = fc.oneof(
      fc.bigInt({ min: 0n, max: MAX_ID }),
      // Low 24 bits all ones, any time: the case peers get wrong by going through Number.
      fc.bigInt({ min: 0n, max: 2n ** 39n - 1n }).map((t) => (t << 24n) | 0xffffffn),
    );
    fc.assert(
      fc.property(ids, (id) => {
        const { time, sequence, machine } = decomposeIn(sonyflake, id);
        expect(composeIn(sonyflake, tickStartMs(sonyflake, time), sequence, machine)).toBe(id);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['(time, sequence, machine)', sonyflake, ['time', 'sequence', 'machine']],
    // Twitter's order, on a 1 ms layout from epoch 0: a tick's start is its time field.
    [
      "Twitter's (time, machine, sequence)",
      defineLayout({ ...TWITTER_SPEC, epochMs: 0 }),
      ['time', 'machine', 'sequence'],
    ],
  ] as const)('IDs compare like their %s tuples', (_order, layout, fields) => {
    fc.assert(
      fc.property(fieldsOf(layout), fieldsOf(layout), (a, b) => {
        const idA = composeIn(layout, tickStartMs(layout, a.time), a.sequence, a.machine);
        const idB = composeIn(layout, tickStartMs(layout, b.time), b.sequence, b.machine);
        const tuple = fields.reduce((sign, field) => sign || Math.sign(a[field] - b[field]), 0);
        expect(Math.sign(Number(idA - idB))).toBe(tuple);
      }),
    );
  });
});

describe('parseId', () => {
  it('accepts bigints and decimal strings in [0, 2^63 - 1]', () => {
    expect(parseId(0n)).toBe(0n);
    expect(parseId('16842753')).toBe(16_842_753n);
    expect(parseId('9223372036854775807')).toBe(MAX_ID);
    expect(parseId('0000000000016842753')).toBe(16_842_753n);
  });

  it.each([
    ['a negative bigint', -1n, /from 0 to 2\^63 - 1/],
    ['2^63', 2n ** 63n, /received 9223372036854775808$/],
    ['2^63 as a string', '9223372036854775808', /received 9223372036854775808$/],
    ['a number', 16842753, /a number cannot hold a 64-bit ID exactly/],
    ['a negative string', '-5', /decimal string of 1 to 19 digits, received "-5"/],
    ['a hex string', '0x10', /received "0x10"/],
    ['an empty string', '', /received "" \(string\)/],
    ['20 digits', '12345678901234567890', /1 to 19 digits/],
    ['whitespace', ' 12', /received " 12"/],
    ['a float string', '1.0', /received "1.0"/],
    ['null', null, /received null/],
  ])('rejects %s with InvalidIdError', (_name, input, message) => {
    expect(() => parseId(input as never)).toThrow(InvalidIdError);
    expect(() => parseId(input as never)).toThrow(message);
  });
});

describe('string and JSON helpers', () => {
  it('formats IDs as decimal strings and validates them', () => {
    expect(formatId(16_842_753n)).toBe('16842753');
    expect(() => formatId(-1n)).toThrow(InvalidIdError);
  });

  it('lets JSON.stringify write bigint IDs as strings', () => {
    expect(JSON.stringify({ id: MAX_ID, n: 1 }, idReplacer)).toBe('{"id":"9223372036854775807","n":1}');
  });
});

describe('composeMachineId', () => {
  const twitter = defineLayout({ ...TWITTER_SPEC, epochMs: 0 });

  it('puts the first part highest, and decompose gives the parts back', () => {
    expect(composeMachineId(twitter, { datacenter: 1, worker: 7 })).toBe(39);
    expect(composeMachineId(twitter, { worker: 31, datacenter: 31 })).toBe(1023);
    const id = composeIn(twitter, 5, 0, composeMachineId(twitter, { datacenter: 17, worker: 3 }));
    expect(decomposeIn(twitter, id).parts).toEqual({ datacenter: 17, worker: 3 });
  });

  eachThrows(
    'rejects %s',
    [
      [
        'a datacenter past 5 bits',
        { datacenter: 32, worker: 0 },
        InvalidMachineIdError,
        /invalid datacenter ID: expected an integer from 0 to 31 \(5 bits\), received 32/,
      ],
      [
        'a negative worker',
        { datacenter: 0, worker: -1 },
        InvalidMachineIdError,
        /invalid worker ID: .*received -1/,
      ],
      ['a missing worker', { datacenter: 0 }, InvalidMachineIdError, /worker ID: .*received undefined/],
      [
        'an unknown part',
        { datacenter: 0, worker: 0, process: 1 },
        InvalidArgumentError,
        /has datacenter and worker, received "process"/,
      ],
    ],
    (parts) => composeMachineId(twitter, parts as never),
  );

  it('refuses parts for a layout without them', () => {
    expect(() => composeMachineId(sonyflake, { worker: 1 })).toThrow(/has one machine field/);
  });
});
