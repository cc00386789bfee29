import type { IdInput, Layout } from '@ids/engine';
import { type Preset, presetClass } from '@ids/engine/internal';
import { autoMachineIdSource, autoNeedsCreate, defaultMachineIdSource } from './machine.js';
import { layoutWithClock, type SonyflakeSettings } from './settings.js';

/** Sonyflake's preset: Go's layout rules, and its machine-ID default (see SonyflakeSettings.machineId). */
const SONYFLAKE: Preset<SonyflakeSettings> = {
  layout: layoutWithClock,
  machineId(settings, layout, async) {
    const { machineId, checkMachineId: check } = settings;
    if (machineId === 'auto') {
      if (!async) throw autoNeedsCreate();
      return autoMachineIdSource().then((source) => ({ layout, source, check }));
    }
    return { layout, source: machineId ?? defaultMachineIdSource(layout.machineBits), check };
  },
};

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
 * providers and checks, and `machineId: 'auto'` (@ids/machine-file's auto chain; see
 * `SonyflakeSettings.machineId`). All settings are validated once, at construction (see the
 * engine's `presetClass`), before any machine ID is claimed; generating an ID can then
 * fail only when the layout's lifetime is over, when the clock has gone back past the bound, or
 * when a claimed machine ID was lost.
 */
export class Sonyflake extends presetClass(SONYFLAKE) {
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
