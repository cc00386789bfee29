import { composeMachineId, InvalidArgumentError, InvalidMachineIdError } from '@ids/engine';
import { type Preset, presetClass } from '@ids/engine/internal';
import { layoutWithClock, type SnowflakeSettings } from './settings.js';

/** No machine ID was given: a snowflake layout has no safe default (see SnowflakeSettings.machineId). */
export class MachineIdRequiredError extends InvalidMachineIdError {
  override readonly code = 'ERR_IDS_MACHINE_ID_REQUIRED';
  override readonly name = 'MachineIdRequiredError';
}

/** Snowflake's preset: a named or node/step layout, and a machine ID that must be given. */
const SNOWFLAKE: Preset<SnowflakeSettings> = {
  layout: layoutWithClock,
  machineId(settings, layout) {
    const { machineId, machineParts, checkMachineId: check } = settings;
    if (machineParts !== undefined) {
      if (machineId !== undefined) {
        throw new InvalidArgumentError('give machineId or machineParts, not both');
      }
      return { layout, source: composeMachineId(layout, machineParts), check };
    }
    if (machineId === undefined) {
      const parts = layout.machineParts?.map((p) => p.name).join(' and ');
      throw new MachineIdRequiredError(
        `no machine ID: expected machineId (0 to ${layout.maxMachine}, a claim or a provider)${parts ? ` or machineParts (${parts})` : ''}; the ${layout.name} layout has ${layout.machineBits} machine bits, too few for a default derived from the host's address`,
      );
    }
    return { layout, source: machineId, check };
  },
};

/**
 * Twitter's snowflake on the @ids engine. With the default (twitter) preset an ID is
 *
 * ```
 * +-+-----------------------------------------+-------+-------+------------+
 * |0|  time: 41 bits, ms since TWITTER_EPOCH  | dc: 5 | wk: 5 | seq: 12    |
 * +-+-----------------------------------------+-------+-------+------------+
 *  63                                       22 21   17 16   12 11         0
 * ```
 *
 * 69 years from the epoch (to 2080-07-10), 4096 IDs per ms (4,096,000/s) per machine, 1024
 * machines. The 'discord' preset has the same bits from 2015; `nodeBits`/`stepBits` give
 * bwmarrin/snowflake's custom layouts.
 *
 * `new Snowflake(settings)` builds it synchronously (a numeric machine ID, machine parts, or a
 * provider and check that answer synchronously); `await Snowflake.create(settings)` also runs
 * asynchronous providers and checks. All settings are validated once, at construction (see the
 * engine's `presetClass`), before any machine ID is claimed; an ID can then fail only when the layout's lifetime is over, when the clock went back past the bound,
 * or when a claimed machine ID was lost.
 */
export class Snowflake extends presetClass(SNOWFLAKE) {}
