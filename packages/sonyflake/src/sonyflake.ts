import {
  IdGenerator,
  type IdInput,
  type Layout,
  type MachineIdClaim,
  resolveMachineIdSync,
} from '@ids/engine';
import { createWithMachineId, type MachineIdRequest } from '@ids/engine/internal';
import { autoMachineIdSource, autoNeedsCreate, defaultMachineIdSource } from './machine.js';
import { type SonyflakeSettings, sonyflakeLayout } from './settings.js';

function machineIdRequest(settings: SonyflakeSettings, layout: Layout): MachineIdRequest {
  if (settings.machineId === 'auto') throw autoNeedsCreate();
  return {
    layout,
    source: settings.machineId ?? defaultMachineIdSource(layout.machineBits),
    check: settings.checkMachineId,
  };
}

/** The settings a resolved machine ID is built with: the ID itself, and no check left to run. */
function withMachineId(settings: SonyflakeSettings, machineId: number | MachineIdClaim): SonyflakeSettings {
  const { checkMachineId: _checked, ...rest } = settings;
  return { ...rest, machineId };
}

/**
 * Sony's Sonyflake. With the default settings an ID is
 *
 * ```
 * +-+---------------------------------------+----------+------------------+
 * |0|  time: 39 bits, 10 ms units           | seq: 8   | machine: 16      |
 * +-+---------------------------------------+----------+------------------+
 *  63                                     25 24      17 16               0
 * ```
 *
 * 174 years from the start time, 256 IDs per 10 ms (25,600/s) per machine, 65,536 machines.
 *
 * `new Sonyflake(settings)` builds it synchronously (a numeric machine ID, or a provider and
 * check that answer synchronously); `await Sonyflake.create(settings)` also runs asynchronous
 * providers and checks. All settings are validated at construction; generating an ID can then
 * fail only when the layout's lifetime is over, when the clock has gone back past the bound, or
 * when a claimed machine ID was lost.
 */
export class Sonyflake extends IdGenerator {
  constructor(settings: SonyflakeSettings = {}) {
    const layout = sonyflakeLayout(settings);
    const request = machineIdRequest(settings, layout);
    const machineId = resolveMachineIdSync(layout, request.source, request.check);
    super({ ...settings, layout, machineId });
  }

  /**
   * Validates the settings, runs the machine-ID provider and check (either may be async), and
   * builds the generator. `machineId: 'auto'` runs @ids/machine-file's auto chain (see
   * `SonyflakeSettings.machineId`).
   */
  static async create(settings: SonyflakeSettings = {}): Promise<Sonyflake> {
    const layout = sonyflakeLayout(settings);
    const resolvedSettings =
      settings.machineId === 'auto' ? { ...settings, machineId: await autoMachineIdSource() } : settings;
    // Awaited here (not returned) so that async stack traces, and the misuse guard's creation
    // site, reach the caller of create().
    return await createWithMachineId(
      machineIdRequest(resolvedSettings, layout),
      (machineId) => new Sonyflake(withMachineId(resolvedSettings, machineId)),
    );
  }

  /** Time since the start time, in ms, of the tick the ID was issued in (Go v1's ElapsedTime). */
  elapsedTime(id: IdInput): number {
    return elapsedMs(this.layout, this.decompose(id).time);
  }

  /** The sequence field of an ID (Go v1's SequenceNumber). */
  sequenceNumber(id: IdInput): number {
    return this.decompose(id).sequence;
  }

  /** The machine field of an ID (Go v1's MachineID). For this generator's own ID, read `machine`. */
  machineId(id: IdInput): number {
    return this.decompose(id).machine;
  }
}

export function elapsedMs(layout: Layout, ticks: number): number {
  return ticks * layout.timeUnitMs;
}
