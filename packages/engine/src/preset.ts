// The one preset-class pattern: a generator class over the engine made from a layout function
// and a machine-ID rule. Sonyflake and Snowflake are `presetClass(...)` plus their own extras.
// Settings are checked once here, in this order: the settings object, the generator settings
// (onError, state, clock, ...), the preset's layout (built once), the machine ID, then
// randomSequenceBound; the generator then takes the checked options and checks nothing again.
import { checkSettingsObject } from './check.js';
import type { Clock } from './clock.js';
import { IdGenerator } from './generator.js';
import type { Layout } from './layout.js';
import {
  type MachineIdCheck,
  type MachineIdClaim,
  type MachineIdSource,
  releaseQuietly,
  resolveMachineId,
  resolveMachineIdSync,
} from './machine.js';
import {
  CheckedGeneratorOptions,
  type CheckedSettings,
  checkSequenceBound,
  checkSettings,
  type GeneratorSettings,
} from './options.js';

/** What a preset needs to resolve its machine ID: the layout (for the field width), the source, the check. */
export interface MachineIdRequest {
  /** The preset's layout: its machine field's width bounds the ID. */
  readonly layout: Layout;
  /** The `machineId` setting as the user gave it (after the preset applied its default). */
  readonly source: MachineIdSource;
  /** The `checkMachineId` setting; none accepts every ID in range. */
  readonly check?: MachineIdCheck | undefined;
}

/** What makes a preset: how its settings become a layout, and where its machine ID comes from. */
export interface Preset<S extends GeneratorSettings> {
  /**
   * The layout the settings ask for, validated (each setting read once). `clock` is the checked
   * clock, for a start time that must not be ahead of it.
   */
  layout(settings: S, clock: Clock): Layout;
  /**
   * The machine ID the settings ask for, with the preset's default applied. `async` is true in
   * `create()`, where the request itself may be found asynchronously.
   */
  machineId(settings: S, layout: Layout, async: boolean): MachineIdRequest | Promise<MachineIdRequest>;
}

/** A preset's settings checked up to the machine ID: everything a bad value of could fail. */
class Prepared<S extends GeneratorSettings> {
  readonly given: S;
  readonly settings: CheckedSettings;
  readonly layout: Layout;
  readonly bound: number;

  constructor(preset: Preset<S>, input: S | undefined) {
    this.given = checkSettingsObject(input);
    this.settings = checkSettings(this.given);
    this.layout = preset.layout(this.given, this.settings.clock);
    this.bound = checkSequenceBound(this.settings, this.layout);
  }

  /** The generator's options with the machine ID that `resolveMachineId(Sync)` checked. */
  options(machineId: number | MachineIdClaim): CheckedGeneratorOptions {
    return new CheckedGeneratorOptions(this.settings, this.layout, this.bound, machineId);
  }
}

/**
 * The body of a preset's static `create()`: resolves the machine ID (provider and check may be
 * async), then calls `build` with it. If `build` throws, a claimed ID is released before the
 * error is passed on, so a failed create() never leaves an ID held.
 *
 * @throws what resolveMachineId throws, or what `build` throws.
 */
export async function createWithMachineId<G>(
  request: MachineIdRequest,
  build: (machineId: number | MachineIdClaim) => G,
): Promise<G> {
  const machineId = await resolveMachineId(request.layout, request.source, request.check);
  try {
    return build(machineId);
  } catch (error) {
    await releaseQuietly(machineId);
    throw error;
  }
}

/** What `presetClass` returns: a generator class to extend, with its constructor and `create()`. */
export interface PresetClass<S extends GeneratorSettings> {
  /** Checks `settings` and builds the generator (the checked options are what `create()` passes). */
  new (settings?: S | CheckedGeneratorOptions): IdGenerator;
  /** Validates the settings, runs the machine-ID provider and check (either may be async), and builds the generator. */
  create<G>(this: new (options: CheckedGeneratorOptions) => G, settings?: S): Promise<G>;
}

/**
 * A generator class for a preset: `new X(settings)` builds synchronously (a numeric machine ID,
 * or a provider and check that answer synchronously); `await X.create(settings)` also runs
 * asynchronous providers and checks. Either way every setting is read and checked once, before
 * any machine ID is claimed, and the layout is built once.
 */
export function presetClass<S extends GeneratorSettings>(preset: Preset<S>): PresetClass<S> {
  return class PresetGenerator extends IdGenerator {
    /** Checks `settings` and builds the generator; `create()` passes the options it checked. */
    constructor(settings?: S | CheckedGeneratorOptions) {
      if (CheckedGeneratorOptions.is(settings)) {
        super(settings);
        return;
      }
      const prepared = new Prepared(preset, settings);
      const request = preset.machineId(prepared.given, prepared.layout, false) as MachineIdRequest;
      super(prepared.options(resolveMachineIdSync(prepared.layout, request.source, request.check)));
    }

    /** Validates the settings, runs the machine-ID provider and check (either may be async), and builds the generator. */
    static async create<G>(this: new (options: CheckedGeneratorOptions) => G, settings?: S): Promise<G> {
      const prepared = new Prepared(preset, settings);
      const request = await preset.machineId(prepared.given, prepared.layout, true);
      // Awaited here (not returned) so that async stack traces, and the misuse guard's creation
      // site, reach the caller of create().
      return await createWithMachineId(request, (machineId) => new this(prepared.options(machineId)));
    }
  };
}
