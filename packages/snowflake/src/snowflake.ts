import {
  composeMachineId,
  IdGenerator,
  InvalidArgumentError,
  InvalidMachineIdError,
  type Layout,
  type MachineIdClaim,
  resolveMachineIdSync,
} from '@ids/engine';
import { createWithMachineId, type MachineIdRequest } from '@ids/engine/internal';
import { type SnowflakeSettings, snowflakeLayout } from './settings.js';

/** No machine ID was given: a snowflake layout has no safe default (see SnowflakeSettings.machineId). */
export class MachineIdRequiredError extends InvalidMachineIdError {
  override readonly code = 'ERR_IDS_MACHINE_ID_REQUIRED';
  override readonly name = 'MachineIdRequiredError';
}

function machineIdRequest(settings: SnowflakeSettings, layout: Layout): MachineIdRequest {
  const check = settings.checkMachineId;
  if (settings.machineParts !== undefined) {
    if (settings.machineId !== undefined) {
      throw new InvalidArgumentError('give machineId or machineParts, not both');
    }
    return { layout, source: composeMachineId(layout, settings.machineParts), check };
  }
  if (settings.machineId === undefined) {
    const parts = layout.machineParts?.map((p) => p.name).join(' and ');
    throw new MachineIdRequiredError(
      `no machine ID: expected machineId (0 to ${layout.maxMachine}, a claim or a provider)${parts ? ` or machineParts (${parts})` : ''}; the ${layout.name} layout has ${layout.machineBits} machine bits, too few for a default derived from the host's address`,
    );
  }
  return { layout, source: settings.machineId, check };
}

/** The settings a resolved machine ID is built with: the ID itself, no parts, and no check left to run. */
function withMachineId(settings: SnowflakeSettings, machineId: number | MachineIdClaim): SnowflakeSettings {
  const { checkMachineId: _checked, machineParts: _parts, ...rest } = settings;
  return { ...rest, machineId };
}

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
 * asynchronous providers and checks. All settings are validated at construction; an ID can
 * then fail only when the layout's lifetime is over, when the clock went back past the bound,
 * or when a claimed machine ID was lost.
 */
export class Snowflake extends IdGenerator {
  constructor(settings: SnowflakeSettings = {}) {
    const layout = snowflakeLayout(settings);
    const request = machineIdRequest(settings, layout);
    const machineId = resolveMachineIdSync(layout, request.source, request.check);
    super({ ...settings, layout, machineId });
  }

  /** Validates the settings, runs the machine-ID provider and check (either may be async), and builds the generator. */
  static async create(settings: SnowflakeSettings = {}): Promise<Snowflake> {
    const layout = snowflakeLayout(settings);
    // Awaited here (not returned) so that async stack traces, and the misuse guard's creation
    // site, reach the caller of create().
    return await createWithMachineId(
      machineIdRequest(settings, layout),
      (machineId) => new Snowflake(withMachineId(settings, machineId)),
    );
  }
}
