// Layouts by name or by a short spec, for --layout and `ids compare`. The names are the engine's
// table of named layouts (NAMED_LAYOUTS); each spec goes through the settings of @ids/sonyflake
// or @ids/snowflake, so it is validated exactly as in code.
import {
  type IdGenerator,
  LAYOUT_NAMES,
  type Layout,
  type MachineIdClaim,
  NAMED_LAYOUTS,
  type NamedLayout,
  namedLayout,
} from '@ids/engine';
import { Snowflake, type SnowflakePreset, type SnowflakeSettings, snowflakeLayout } from '@ids/snowflake';
import { Sonyflake, type SonyflakeSettings, sonyflakeLayout } from '@ids/sonyflake';
import { UsageError } from './errors.js';

/** A layout the command can name, compare, and build a generator for. */
export interface CliLayout {
  /** How the command prints it: the name, or the spec as typed. */
  readonly label: string;
  /** The validated layout. */
  readonly layout: Layout;
  /**
   * A generator of this layout (a Sonyflake or a Snowflake) for a machine ID.
   * @throws InvalidMachineIdError when the ID does not fit the layout's machine field.
   */
  generator(machineId: number | MachineIdClaim): IdGenerator;
}

function sonyflake(label: string, settings: SonyflakeSettings): CliLayout {
  return {
    label,
    layout: sonyflakeLayout(settings),
    generator: (machineId) => new Sonyflake({ ...settings, machineId }),
  };
}

function snowflake(label: string, settings: SnowflakeSettings): CliLayout {
  return {
    label,
    layout: snowflakeLayout(settings),
    generator: (machineId) => new Snowflake({ ...settings, machineId }),
  };
}

/** A named layout through its family's settings: a Snowflake preset, or a Sonyflake of its bits. */
function named(label: string, { name, family, layout }: NamedLayout): CliLayout {
  if (family === 'snowflake') return snowflake(label, { preset: name as SnowflakePreset });
  return sonyflake(label, {
    bitsSequence: layout.sequenceBits,
    bitsMachineId: layout.machineBits,
    timeUnit: layout.timeUnitMs,
    startTime: layout.epochMs,
  });
}

/** What `ids compare` shows when given no --layout: every named layout. */
export const DEFAULT_COMPARISON = Object.keys(NAMED_LAYOUTS);

/** The keys each custom spec kind takes, mapped to its settings. */
const KEYS = {
  sonyflake: { seq: 'bitsSequence', machine: 'bitsMachineId', unit: 'timeUnit', epoch: 'startTime' },
  snowflake: { node: 'nodeBits', step: 'stepBits', epoch: 'epoch' },
} as const;

/** What --layout takes, as rows of the form and what it means (for the options' help). */
export const LAYOUT_SPEC_HELP: readonly (readonly [string, string])[] = [
  [
    'NAME',
    `${LAYOUT_NAMES.join(', ')} (${Object.values<NamedLayout>(NAMED_LAYOUTS)
      .flatMap((entry) => (entry.aliases ?? []).map((alias) => `${alias} = ${entry.name}`))
      .join(', ')})`,
  ],
  [
    'sonyflake:seq=B,machine=B,unit=MS,epoch=DATE',
    'Sonyflake settings (Go names: BitsSequence, BitsMachineID, TimeUnit, StartTime)',
  ],
  ['snowflake:node=B,step=B,epoch=DATE', 'bwmarrin-style node/step bits (node + step <= 22)'],
  ['DATE', 'YYYY-MM-DD, an ISO instant, or Unix ms; omitted keys take the defaults'],
];

function parseEpoch(text: string, spec: string): number {
  if (/^[0-9]+$/.test(text)) return Number(text);
  // A date alone is read as UTC midnight; a date and time must say its zone, since JS would
  // read it in the local zone and the same command would mean another epoch on another host.
  if (/^\d{4}-\d\d-\d\dT/.test(text) && !/(Z|[+-]\d\d:?\d\d)$/i.test(text)) {
    throw new UsageError(
      `--layout ${spec}: epoch: a date and time needs its zone (Z or +hh:mm), received ${JSON.stringify(text)}`,
    );
  }
  const ms = /^\d{4}-\d\d-\d\d/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new UsageError(
      `--layout ${spec}: epoch: expected YYYY-MM-DD, an ISO instant or Unix ms, received ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

/**
 * A layout from a name or a spec like `sonyflake:seq=10,machine=12` / `snowflake:node=8,step=14`.
 * @throws UsageError for an unknown name, kind or key, or a value that is not a number or date;
 * the settings errors of the packages for values out of range.
 */
export function parseLayout(spec: string): CliLayout {
  const entry = namedLayout(spec);
  if (entry) return named(spec, entry);
  const colon = spec.indexOf(':');
  const kind = spec.slice(0, colon);
  if (colon < 0 || (kind !== 'sonyflake' && kind !== 'snowflake')) {
    throw new UsageError(
      `--layout: expected one of ${LAYOUT_NAMES.join(', ')}, or sonyflake:KEY=VALUE,... or snowflake:KEY=VALUE,..., received ${JSON.stringify(spec)}`,
    );
  }
  const keys: Readonly<Record<string, string>> = KEYS[kind];
  const settings: Record<string, number> = {};
  for (const pair of spec.slice(colon + 1).split(',')) {
    const [key = '', value, extra] = pair.split('=');
    if (!Object.hasOwn(keys, key) || value === undefined || value === '' || extra !== undefined) {
      throw new UsageError(
        `--layout ${spec}: expected KEY=VALUE pairs with keys ${Object.keys(keys).join(', ')}, received ${JSON.stringify(pair)}`,
      );
    }
    if (key === 'epoch') {
      settings[keys[key]!] = parseEpoch(value, spec);
    } else if (/^[0-9]+$/.test(value)) {
      settings[keys[key]!] = Number(value);
    } else {
      throw new UsageError(
        `--layout ${spec}: ${key}: expected a whole number, received ${JSON.stringify(value)}`,
      );
    }
  }
  return kind === 'sonyflake' ? sonyflake(spec, settings) : snowflake(spec, settings);
}
