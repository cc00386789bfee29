import { describe, expect, it } from 'vitest';
import { FakeClock, InvalidArgumentError, Snowflake, type SnowflakeSettings } from '../src/index.js';

const NOW = Date.UTC(2026, 10, 22, 12);

describe('settings checked at construction', () => {
  it.each([
    ['settings null', null, /settings: expected an object, received null/],
    ['onError 5', { onError: 5 }, /onError: expected a function that takes an error, received 5 \(number\)/],
    ['state 5', { state: 5 }, /state: expected a state cell .*received 5 \(number\)/],
    ['state {}', { state: {} }, /state\.load: expected a state cell .*received undefined/],
  ])('%s is InvalidArgumentError saying what, expected and received', (_name, settings, message) => {
    const full = settings === null ? null : { machineId: 1, clock: new FakeClock(NOW), ...settings };
    const attempt = () => new Snowflake(full as unknown as SnowflakeSettings);
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(message);
  });
});
