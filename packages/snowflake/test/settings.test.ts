import { describe } from 'vitest';
import { badGeneratorSettings, eachThrows } from '../../engine/test/kit.js';
import { FakeClock, InvalidArgumentError, Snowflake, type SnowflakeSettings } from '../src/index.js';

const NOW = Date.UTC(2026, 10, 22, 12);

describe('settings checked at construction', () => {
  eachThrows(
    '%s is InvalidArgumentError saying what, expected and received',
    badGeneratorSettings(InvalidArgumentError),
    (settings) =>
      new Snowflake(
        (settings === null
          ? null
          : { machineId: 1, clock: new FakeClock(NOW), ...settings }) as SnowflakeSettings,
      ),
  );
});
