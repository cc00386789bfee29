// The page's logic without a browser: reading pasted text, the fields of each layout, judging a
// reading, and the chart axes. The clock is an argument (nowMs), never Date.now().
import { decomposeIn as decompose, defineLayout, MAX_ID } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import { bitString, fieldsOf, fieldValue } from '../src/page/fields.js';
import { inputMessage } from '../src/page/inspect-view.js';
import { readAll, readAs } from '../src/page/layout-reading.js';
import { BUILT_IN, customLayout, DEFAULT_CUSTOM, type PageLayout } from '../src/page/layouts.js';
import { MAX_SHOWN, parseInput } from '../src/page/parse-input.js';
import { logAxis, logPercent, powerLabel, timeAxis, timePercent } from '../src/page/scale.js';

const NOW = Date.UTC(2026, 10, 23, 12);
const [SONYFLAKE, SONYFLAKE_V2, TWITTER, DISCORD] = BUILT_IN as [
  PageLayout,
  PageLayout,
  PageLayout,
  PageLayout,
];

// Made by hand: tick 29463504567 (2024-01-02T03:04:05.670Z), sequence 5, machine 0x1234.
const SONYFLAKE_ID = 494315580237877812n;
// A tweet's ID: 2022-10-28T03:49:11.734Z, datacenter 10, worker 10, sequence 0.
const TWITTER_ID = 1585841080431321088n;

// The example ID of Discord's API reference: 2016-04-30T11:18:25.796Z as Discord reads it, and
// 2017-12-27 as Sonyflake reads it: both believable.
const DISCORD_ID = 175928847299117063n;

describe('parseInput', () => {
  it('reads decimal and hex without being told, several per line, quotes and commas dropped', () => {
    const parsed = parseInput(`${SONYFLAKE_ID}, "06dc2e29f0051234"\n\n  ${DISCORD_ID}  `);
    expect(parsed.total).toBe(3);
    expect(parsed.items).toEqual([
      {
        line: 1,
        text: String(SONYFLAKE_ID),
        id: SONYFLAKE_ID,
        encoding: 'decimal',
        why: 'digits are read as decimal',
      },
      {
        line: 1,
        text: '06dc2e29f0051234',
        id: 0x06dc2e29f0051234n,
        encoding: 'hex',
        why: 'no encoding but hex reads 16 characters like these',
      },
      {
        line: 3,
        text: String(DISCORD_ID),
        id: DISCORD_ID,
        encoding: 'decimal',
        why: 'digits are read as decimal',
      },
    ]);
  });

  it('does not take words for IDs: "hello world" is no ID until base36 is chosen', () => {
    const parsed = parseInput('hello world');
    expect(parsed.total).toBe(2);
    expect(parsed.items).toEqual([
      {
        line: 1,
        text: 'hello',
        error: '"hello" is not an ID unless you choose its encoding',
        candidates: [{ encoding: 'base36', id: 29234652n }],
      },
      {
        line: 1,
        text: 'world',
        error: '"world" is not an ID unless you choose its encoding',
        candidates: [{ encoding: 'base36', id: 54903217n }],
      },
    ]);
    expect(inputMessage(parsed)).toBe(
      '0 IDs read. Line 1: "hello" is not an ID unless you choose its encoding (and 1 more below).',
    );
    // Chosen, base36 reads exactly base36: the same words are two IDs.
    const chosen = parseInput('hello world', 'base36');
    expect(chosen.items).toEqual([
      { line: 1, text: 'hello', id: 29234652n, encoding: 'base36', why: 'the encoding chosen above' },
      { line: 1, text: 'world', id: 54903217n, encoding: 'base36', why: 'the encoding chosen above' },
    ]);
    expect(inputMessage(chosen)).toBe('2 IDs read.');
  });

  it('a bwmarrin base58 ID is read only once bwmarrin58 is chosen, and then only as bwmarrin58', () => {
    expect(parseInput('4jgmnx8Js8A').items[0]).toMatchObject({
      candidates: [{ encoding: 'bwmarrin58', id: 1428076403798048768n }],
    });
    expect(parseInput('4jgmnx8Js8A', 'bwmarrin58').items[0]).toMatchObject({
      id: 1428076403798048768n,
      encoding: 'bwmarrin58',
    });
    // Digits in a chosen encoding are that encoding, not decimal.
    expect(parseInput('1234', 'hex').items[0]).toMatchObject({ error: expect.stringMatching(/hex/) });
    expect(parseInput('1234', 'base36').items[0]).toMatchObject({ id: 49360n, encoding: 'base36' });
  });

  it('counts what was read, not what was pasted', () => {
    const parsed = parseInput(`ID: ${SONYFLAKE_ID}, ${TWITTER_ID}; id ${DISCORD_ID}`);
    expect(parsed.total).toBe(5);
    // "ID:" is no ID in any encoding, "id" only in base36 (not chosen): neither is counted.
    expect(inputMessage(parsed)).toMatch(
      /^3 IDs read\. Line 1: expected an ID .*"ID:".* \(and 1 more below\)\.$/,
    );
  });

  it('says what is wrong with garbage, a negative number, and a number past 2^63 - 1', () => {
    const parsed = parseInput(`not-an-id!\n-5\n${MAX_ID + 1n}\n${'9'.repeat(500)}\n${MAX_ID}`);
    const errors = parsed.items.map((item) => ('error' in item ? item.error : `ok ${item.id}`));
    expect(errors[0]).toMatch(
      /^expected an ID in one of the encodings .*"not-an-id!" \(string\), which none of them reads$/,
    );
    expect(errors[1]).toBe('"-5" is negative: an ID is a whole number from 0 to 2^63 - 1');
    expect(errors[2]).toMatch(/^"9223372036854775808" is past 2\^63 - 1 \(9223372036854775807\)/);
    expect(errors[3]).toMatch(/^"9{37}\.\.\." is past 2\^63 - 1/);
    expect(errors[4]).toBe(`ok ${MAX_ID}`);
  });

  it('lists every encoding when encodings disagree, and uses the one chosen', () => {
    const [ambiguous] = parseInput('zz').items;
    expect(ambiguous).toMatchObject({
      error: '"zz" is not an ID unless you choose its encoding',
      candidates: [
        { encoding: 'bwmarrin32', id: 759n },
        { encoding: 'bwmarrin58', id: 1947n },
        { encoding: 'base36', id: 1295n },
      ],
    });
    expect(parseInput('zz', 'base36').items[0]).toMatchObject({ id: 35n * 36n + 35n, encoding: 'base36' });
    // Either letter case, as Go's ParseBase36 reads.
    expect(parseInput('ZZ zZ', 'base36').items).toMatchObject([
      { id: 35n * 36n + 35n, encoding: 'base36' },
      { id: 35n * 36n + 35n, encoding: 'base36' },
    ]);
    expect(parseInput('zz', 'hex').items[0]).toMatchObject({ error: expect.stringMatching(/hex/) });
  });

  it(`decodes only the first ${MAX_SHOWN} of 10,000 lines and counts them all`, () => {
    const text = Array.from({ length: 10_000 }, (_, i) => String(SONYFLAKE_ID + BigInt(i))).join('\n');
    const parsed = parseInput(text);
    expect(parsed.total).toBe(10_000);
    expect(parsed.items).toHaveLength(MAX_SHOWN);
    expect(parsed.items.at(-1)).toMatchObject({ line: MAX_SHOWN, id: SONYFLAKE_ID + BigInt(MAX_SHOWN - 1) });
  });
});

describe('fieldsOf', () => {
  const layouts = [
    ...BUILT_IN,
    customLayout(DEFAULT_CUSTOM),
    customLayout({ ...DEFAULT_CUSTOM, timeBits: 30 }),
  ];

  it.each(layouts.map((l) => [l.label, l] as const))(
    '%s: fields cover bits 63..0 once, values agree with decompose',
    (_, named) => {
      const fields = fieldsOf(named.layout);
      let top = 64;
      for (const field of fields) {
        expect(field.low + field.bits).toBe(top);
        top = field.low;
      }
      expect(top).toBe(0);
      const id = named.layout.maxId / 3n;
      const parts = decompose(named.layout, id);
      const value = (name: string) => Number(fieldValue(id, fields.find((f) => f.name === name)!));
      expect(value('time')).toBe(parts.time);
      expect(value('sequence')).toBe(parts.sequence);
      if (parts.parts) for (const [name, v] of Object.entries(parts.parts)) expect(value(name)).toBe(v);
      else expect(value('machine')).toBe(parts.machine);
    },
  );

  it('names the unused bits of a layout narrower than 63 bits, and the order of Twitter fields', () => {
    const narrow = fieldsOf(customLayout({ ...DEFAULT_CUSTOM, timeBits: 30 }).layout);
    expect(narrow.map((f) => `${f.name} ${f.bits}`)).toEqual([
      'sign 1',
      'unused 11',
      'time 30',
      'machine 12',
      'sequence 10',
    ]);
    expect(fieldsOf(TWITTER.layout).map((f) => `${f.kind}:${f.name} ${f.bits}`)).toEqual([
      'sign:sign 1',
      'time:time 41',
      'machine:datacenter 5',
      'machine:worker 5',
      'sequence:sequence 12',
    ]);
    expect(bitString(5n)).toBe(`${'0'.repeat(61)}101`);
  });
});

describe('readAs', () => {
  it('reads a Sonyflake ID as made: tick start, sequence, machine', () => {
    const reading = readAs(SONYFLAKE, SONYFLAKE_ID, NOW);
    expect(reading.problem).toBeUndefined();
    expect(new Date(reading.startMs!).toISOString()).toBe('2024-01-02T03:04:05.670Z');
    expect(reading.fields).toMatchObject({ time: 29463504567, sequence: 5, machine: 0x1234 });
  });

  it('finds a Twitter ID read as Sonyflake in the future, and names Twitter as plausible', () => {
    const { chosen, plausible } = readAll(TWITTER_ID, SONYFLAKE, BUILT_IN, NOW);
    expect(chosen.problem).toBe('its time, 2044-08-14T05:15:42.690Z, is in the future');
    expect(plausible.map((r) => r.named.name)).toEqual(['twitter']);
    expect(new Date(plausible[0]!.startMs!).toISOString()).toBe('2022-10-28T03:49:11.734Z');
    expect(plausible[0]!.fields?.parts).toEqual({ datacenter: 10, worker: 10 });
  });

  it('judges against the clock it is given: the same reading is plausible once its time has come', () => {
    expect(readAs(SONYFLAKE, TWITTER_ID, Date.UTC(2044, 7, 14, 5, 15, 42, 690)).problem).toBeUndefined();
    expect(readAs(SONYFLAKE, TWITTER_ID, Date.UTC(2044, 7, 14, 5, 13)).problem).toMatch(/future/);
    expect(readAs(DISCORD, TWITTER_ID, NOW).problem).toBe(
      'its time, 2026-12-25T02:06:17.077Z, is in the future',
    );
    expect(readAs(SONYFLAKE_V2, SONYFLAKE_ID, NOW).problem).toMatch(/future/);
  });

  it('finds a Discord ID plausible as Sonyflake (the default) and names Discord and Twitter beside it', () => {
    const { chosen, plausible } = readAll(DISCORD_ID, SONYFLAKE, BUILT_IN, NOW);
    expect(chosen.problem).toBeUndefined();
    expect(new Date(chosen.startMs!).toISOString()).toBe('2017-12-27T16:16:04.490Z');
    expect(plausible.map((r) => [r.named.name, new Date(r.startMs!).toISOString()])).toEqual([
      ['twitter', '2012-03-03T13:01:20.453Z'],
      ['discord', '2016-04-30T11:18:25.796Z'],
    ]);
  });

  it('flags an ID wider than the layout, and a layout whose epoch is after today', () => {
    const narrow = customLayout({ ...DEFAULT_CUSTOM, timeBits: 30 });
    expect(readAs(narrow, TWITTER_ID, NOW)).toMatchObject({
      fields: undefined,
      problem: 'it has bits set above the 52 bits the layout uses',
    });
    const later = customLayout({ ...DEFAULT_CUSTOM, epochMs: Date.UTC(2030, 0, 1) });
    expect(readAs(later, 1n, NOW).problem).toBe(
      "today is before the layout's epoch (2030-01-01T00:00:00.000Z): no ID of it can exist yet",
    );
  });
});

describe('chart axes', () => {
  it('the time axis spans the earliest epoch to past the latest end, labels the first year', () => {
    const spans = BUILT_IN.map((l) => ({
      startMs: l.layout.epochMs,
      endMs: (l.layout.epochTick + l.layout.tickLimit) * l.layout.timeUnitMs,
    }));
    const axis = timeAxis(spans, NOW);
    expect(new Date(axis.startMs).toISOString()).toBe('2010-01-01T00:00:00.000Z');
    expect(new Date(axis.endMs).toISOString()).toBe('2200-01-01T00:00:00.000Z');
    expect(axis.ticks.map((t) => t.label)).toEqual(['2010', '2050', '2100', '2150', '2200']);
    expect(timePercent(axis, axis.startMs)).toBe(0);
    expect(timePercent(axis, Date.UTC(3000, 0, 1))).toBe(100);
  });

  it('a layout lasting to year 275760 does not squash the others: the axis stops 400 years on', () => {
    const far = defineLayout({
      timeBits: 37,
      timeUnitMs: 60_000,
      sequenceBits: 8,
      machineBits: 8,
      epochMs: 0,
    });
    const axis = timeAxis([{ startMs: 0, endMs: (far.epochTick + far.tickLimit) * 60_000 }], NOW);
    expect(new Date(axis.endMs).getUTCFullYear()).toBe(2370);
  });

  it('the log axes hold the largest value and place powers of ten evenly', () => {
    const axis = logAxis([25_600, 4_096_000]);
    expect(axis.decades).toBe(7);
    expect(logPercent(axis, 1)).toBe(0);
    expect(logPercent(axis, 10_000_000)).toBe(100);
    expect(logPercent(axis, 1000)).toBeCloseTo((3 / 7) * 100);
    expect([0, 1, 2, 3, 6, 7, 9].map(powerLabel)).toEqual(['1', '10', '100', '1k', '1M', '10M', '1G']);
  });
});
