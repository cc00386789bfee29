import { describe, expect, it } from 'vitest';
import {
  checkGeneratorOptions,
  FakeClock,
  IdGenerator,
  InvalidArgumentError,
  InvalidStartTimeError,
  StartTimeAheadError,
} from '../src/index.js';
import { checkInteger, checkStartTime, closestName, errorText, maxTimeBits } from '../src/internal.js';
import { defineLayout } from '../src/layout.js';
import { SONYFLAKE_SPEC } from './layouts.js';

const NOW = Date.UTC(2026, 10, 22, 12);

describe('the checks every package shares', () => {
  it('checkInteger: the value, or the error its caller builds, saying the range and what came', () => {
    expect(checkInteger(5, 'min', 0, 10)).toBe(5);
    expect(() => checkInteger(1.5, 'min', 0, 10)).toThrow(InvalidArgumentError);
    expect(() => checkInteger('3', 'min', 0, 10)).toThrow(
      /^min: expected an integer from 0 to 10, received "3" \(string\)$/,
    );
    expect(() => checkInteger(0, 'ttl', 1, 86_400, undefined, true)).toThrow(/from 1 to 86,400, received 0/);
    class Custom extends Error {}
    expect(() => checkInteger(-1, 'x', 0, 1, (what, expected) => new Custom(`${what}: ${expected}`))).toThrow(
      Custom,
    );
  });

  it('errorText: an Error’s message, or anything else as text', () => {
    expect(errorText(new Error('boom'))).toBe('boom');
    expect(errorText('plain')).toBe('plain');
    expect(errorText(42)).toBe('42');
  });

  it('checkStartTime: a Date or whole ms, not after the clock, named as its caller names it', () => {
    const clock = new FakeClock(NOW);
    expect(checkStartTime(new Date(NOW - 1), clock, 'epoch')).toBe(NOW - 1);
    expect(() => checkStartTime(new Date(Number.NaN), clock, 'start time')).toThrow(InvalidStartTimeError);
    expect(() => checkStartTime(NOW + 1, clock, 'epoch')).toThrow(StartTimeAheadError);
    expect(() => checkStartTime(NOW + 1, clock, 'epoch')).toThrow(/expected an epoch in the past/);
  });

  it('IdGenerator refuses an onError or state that would fail later, at construction', () => {
    const layout = defineLayout(SONYFLAKE_SPEC);
    const clock = new FakeClock(NOW);
    for (const [bad, message] of [
      [{ onError: 5 }, /onError: expected a function that takes an error, received 5 \(number\)/],
      [{ state: 5 }, /state: expected a state cell/],
      [{ state: {} }, /state\.load: expected a state cell/],
      [{ state: { load: () => 0, commit: 'yes' } }, /state\.commit: expected a state cell .*received "yes"/],
    ] as const) {
      expect(
        () => new IdGenerator(checkGeneratorOptions({ layout, machineId: 1, clock, ...(bad as object) })),
      ).toThrow(message);
    }
  });

  it('maxTimeBits: the most time bits whose last tick is still a Date', () => {
    const epoch = Date.UTC(2014, 8, 1);
    expect(maxTimeBits(epoch, 10)).toBe(49);
    expect(maxTimeBits(epoch, 1)).toBe(52);
    expect(maxTimeBits(epoch, 3_600_000)).toBe(31);
    expect(maxTimeBits(0, 9e15)).toBe(0);
    for (const unit of [1, 10, 3_600_000]) {
      const bits = maxTimeBits(epoch, unit);
      expect(() =>
        defineLayout({
          ...SONYFLAKE_SPEC,
          sequenceBits: 1,
          machineBits: 1,
          timeBits: bits,
          timeUnitMs: unit,
          epochMs: epoch,
        }),
      ).not.toThrow();
      expect(() =>
        defineLayout({
          ...SONYFLAKE_SPEC,
          sequenceBits: 1,
          machineBits: 1,
          timeBits: bits + 1,
          timeUnitMs: unit,
          epochMs: epoch,
        }),
      ).toThrow(/year 275760/);
    }
  });
});

describe('closestName', () => {
  const commands = ['generate', 'decompose', 'compare', 'machine-id', 'inspect', 'serve'];

  it.each([
    ['gen', 'generate'], // the only name it begins
    ['decompse', 'decompose'], // one letter left out
    ['machineid', 'machine-id'],
    ['comapre', 'compare'], // two letters swapped: distance 2, within a third of 7 letters
    ['serve', 'serve'],
  ])('%s: %s', (word, expected) => {
    expect(closestName(word, commands)).toBe(expected);
  });

  it.each([
    ['frobnicate'], // nothing near
    [''],
  ])('%j: undefined', (word) => {
    expect(closestName(word, commands)).toBeUndefined();
  });

  it('gives none for a prefix of two names, or two names equally near', () => {
    expect(closestName('--s', ['--scheme', '--store'])).toBeUndefined();
    expect(closestName('--jso', ['--json', '--jsob'])).toBeUndefined();
    expect(closestName('-x', ['-n', '-m'])).toBeUndefined();
  });
});
