import { checkInteger } from './check.js';
import {
  InvalidBitsMachineIdError,
  InvalidBitsSequenceError,
  InvalidBitsTimeError,
  InvalidLayoutError,
  InvalidStartTimeError,
  InvalidTimeUnitError,
  received,
} from './errors.js';

/** A named slice of the machine field, highest bits first (for example datacenter 5 + worker 5). */
export interface MachinePart {
  /** Its key in `composeMachineId` and DecomposedId's `parts`: non-empty, distinct among the parts. */
  readonly name: string;
  /** Its width: an integer of 1 or more; the parts' widths sum to `machineBits`. */
  readonly bits: number;
}

/**
 * Which of the two low fields sits higher. Sonyflake puts the sequence above the machine ID;
 * Twitter's snowflake (and bwmarrin/snowflake, Discord) puts the machine ID above the sequence.
 */
export type FieldOrder = 'sequence-machine' | 'machine-sequence';

/**
 * What a layout is made of. An ID is, from the highest bit down, time then the two low fields
 * in `fieldOrder`:
 *
 * ```
 *  63        62 ...                                            0
 * +---+----------------------+--------------------+------------------+
 * | 0 |  time (timeBits)     | sequence (seqBits) | machine (mBits)  |   'sequence-machine' (Sonyflake)
 * +---+----------------------+--------------------+------------------+
 * | 0 |  time (timeBits)     | machine (mBits)    | sequence (seqBits)|   'machine-sequence' (Twitter)
 * +---+----------------------+--------------------+------------------+
 * ```
 *
 * Bits above `timeBits + sequenceBits + machineBits` are always 0, so an ID is a non-negative
 * signed 64-bit integer.
 */
export interface LayoutSpec {
  /** A label for tables and errors, e.g. "sonyflake". */
  readonly name?: string;
  /** Bits of the time field: 1 or more; with the others at most 63. */
  readonly timeBits: number;
  /** Length of one time unit (a tick) in ms: an integer >= 1. Sonyflake: 10, snowflake: 1. */
  readonly timeUnitMs: number;
  /** Bits of the per-tick sequence: an integer in 0..30. */
  readonly sequenceBits: number;
  /** Bits of the machine ID: an integer in 0..30. */
  readonly machineBits: number;
  /** The instant time 0 stands for, in Unix ms (an integer). */
  readonly epochMs: number;
  /** Optional split of the machine field into named parts whose bits sum to `machineBits`. */
  readonly machineParts?: readonly MachinePart[];
  /** Order of the fields below the time. Default 'sequence-machine' (Sonyflake's). */
  readonly fieldOrder?: FieldOrder;
}

/** A validated layout with the values every operation derives from it, computed once. */
export interface Layout extends LayoutSpec {
  readonly name: string;
  readonly fieldOrder: FieldOrder;
  /**
   * epochMs / timeUnitMs truncated toward zero: ticks are counted from Unix time 0, then offset,
   * as Go does (`UnixNano() / timeUnit`, an integer division that truncates toward zero, also for
   * the negative instants before 1970). See tickOf.
   */
  readonly epochTick: number;
  /** 2^timeBits: the first tick that no longer fits. */
  readonly tickLimit: number;
  /** 2^sequenceBits - 1. */
  readonly maxSequence: number;
  /** 2^machineBits - 1. */
  readonly maxMachine: number;
  /** The factor that places the sequence in the low bits: 2^machineBits when it sits above the machine field, else 1. */
  readonly sequenceScale: number;
  /** The factor that places the machine ID in the low bits: 2^sequenceBits when it sits above the sequence, else 1. */
  readonly machineScale: number;
  /** sequenceBits + machineBits, as a bigint shift for the time field. */
  readonly timeShift: bigint;
  /** 2^(timeBits + sequenceBits + machineBits) - 1: the largest value an ID of this layout can have. */
  readonly maxId: bigint;
}

/** The largest instant a JS Date can hold, in ms either side of 1970. */
const DATE_LIMIT_MS = 8.64e15;

function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

/**
 * The first three checks of a layout, in Go's order (sequence bits, machine bits, time unit),
 * shared by `defineLayout` and the Sonyflake settings.
 * @throws InvalidBitsSequenceError, InvalidBitsMachineIdError, InvalidTimeUnitError.
 */
export function checkFieldBits(sequenceBits: unknown, machineBits: unknown, timeUnitMs: unknown): void {
  checkInteger(sequenceBits, 'invalid bit length for sequence number', 0, 30, (what, expected) => {
    return new InvalidBitsSequenceError(`${what}: ${expected}`);
  });
  checkInteger(machineBits, 'invalid bit length for machine id', 0, 30, (what, expected) => {
    return new InvalidBitsMachineIdError(`${what}: ${expected}`);
  });
  if (!isInt(timeUnitMs) || timeUnitMs < 1) {
    throw new InvalidTimeUnitError(
      `invalid time unit: expected a whole number of milliseconds, 1 or more, received ${received(timeUnitMs)}`,
    );
  }
}

/**
 * The most time bits a layout from `epochMs` in `timeUnitMs` units can have while its last
 * tick is still an instant a JS Date holds (year 275760); 0 when not even one tick fits.
 */
export function maxTimeBits(epochMs: number, timeUnitMs: number): number {
  const ticksLeft = Math.floor(DATE_LIMIT_MS / timeUnitMs) - Math.trunc(epochMs / timeUnitMs);
  if (!(ticksLeft >= 2)) return 0;
  let bits = Math.min(63, Math.floor(Math.log2(ticksLeft)));
  // log2 of a float may round up at a power of two: step down until the end really fits.
  while (bits > 0 && (Math.trunc(epochMs / timeUnitMs) + 2 ** bits) * timeUnitMs > DATE_LIMIT_MS) bits--;
  return bits;
}

/**
 * Validates a layout and derives its constants. Checks run in Go's order (sequence bits, machine
 * bits, time unit, start time, time bits), so a port from Go sees the same first error.
 */
export function defineLayout(spec: LayoutSpec): Layout {
  if (typeof spec !== 'object' || spec === null) {
    throw new InvalidLayoutError(`expected a layout object, received ${received(spec)}`);
  }
  return layoutOfSpec(spec, false);
}

/**
 * defineLayout for a preset that ran `checkFieldBits` itself (it needs the field widths before
 * it can work out the time bits): the rest of the spec is checked, the field bits not again.
 */
export function defineCheckedFields(spec: LayoutSpec): Layout {
  return layoutOfSpec(spec, true);
}

function layoutOfSpec(spec: LayoutSpec, fieldsChecked: boolean): Layout {
  const { timeBits, timeUnitMs, sequenceBits, machineBits, epochMs } = spec;
  const name = spec.name ?? 'custom';
  if (!fieldsChecked) checkFieldBits(sequenceBits, machineBits, timeUnitMs);
  if (!isInt(epochMs) || Math.abs(epochMs) > DATE_LIMIT_MS) {
    throw new InvalidStartTimeError(
      `invalid start time: expected a whole number of Unix milliseconds a Date can hold, received ${received(epochMs)}`,
    );
  }
  if (!isInt(timeBits) || timeBits < 1) {
    throw new InvalidBitsTimeError(
      `invalid bit length for time: expected an integer of 1 or more, received ${received(timeBits)}`,
    );
  }
  const total = timeBits + sequenceBits + machineBits;
  if (total > 63) {
    throw new InvalidLayoutError(
      `the fields need ${total} bits (time ${timeBits} + sequence ${sequenceBits} + machine ${machineBits}); expected at most 63, so that IDs stay positive signed 64-bit integers`,
    );
  }
  // The sequence and machine fields are combined as one JS number on the hot path.
  if (sequenceBits + machineBits > 53) {
    throw new InvalidLayoutError(
      `sequence and machine bits together must be at most 53, received ${sequenceBits} + ${machineBits}`,
    );
  }
  // `|| 0`: an epoch within a unit before 1970 truncates to -0, which would leak into ticks.
  const epochTick = Math.trunc(epochMs / timeUnitMs) || 0;
  const tickLimit = 2 ** timeBits;
  const endMs = (epochTick + tickLimit) * timeUnitMs;
  if (endMs > DATE_LIMIT_MS) {
    throw new InvalidLayoutError(
      `a ${timeBits}-bit time field of ${timeUnitMs} ms units from ${new Date(epochMs).toISOString()} ends past the last instant a JS Date can hold (year 275760); expected fewer time bits or a shorter unit`,
    );
  }
  const machineParts =
    spec.machineParts === undefined ? undefined : validateParts(spec.machineParts, machineBits);
  const fieldOrder = spec.fieldOrder ?? 'sequence-machine';
  if (fieldOrder !== 'sequence-machine' && fieldOrder !== 'machine-sequence') {
    throw new InvalidLayoutError(
      `fieldOrder: expected 'sequence-machine' or 'machine-sequence', received ${received(fieldOrder)}`,
    );
  }
  const machineAbove = fieldOrder === 'machine-sequence';
  return Object.freeze({
    name,
    timeBits,
    timeUnitMs,
    sequenceBits,
    machineBits,
    epochMs,
    ...(machineParts ? { machineParts } : {}),
    fieldOrder,
    epochTick,
    tickLimit,
    maxSequence: 2 ** sequenceBits - 1,
    maxMachine: 2 ** machineBits - 1,
    sequenceScale: machineAbove ? 1 : 2 ** machineBits,
    machineScale: machineAbove ? 2 ** sequenceBits : 1,
    timeShift: BigInt(sequenceBits + machineBits),
    maxId: (1n << BigInt(total)) - 1n,
  });
}

function validateParts(parts: readonly MachinePart[], machineBits: number): readonly MachinePart[] {
  if (!Array.isArray(parts) || parts.length === 0) {
    throw new InvalidLayoutError(`machineParts: expected a non-empty array, received ${received(parts)}`);
  }
  let sum = 0;
  const names = new Set<string>();
  for (const part of parts) {
    if (typeof part?.name !== 'string' || part.name === '' || names.has(part.name)) {
      throw new InvalidLayoutError(
        `machineParts: expected distinct non-empty names, received ${received(part?.name)}`,
      );
    }
    if (!isInt(part.bits) || part.bits < 1) {
      throw new InvalidLayoutError(
        `machineParts: part "${part.name}" expected an integer of 1 or more bits, received ${received(part.bits)}`,
      );
    }
    names.add(part.name);
    sum += part.bits;
  }
  if (sum !== machineBits) {
    throw new InvalidLayoutError(
      `machineParts: the parts' bits sum to ${sum}, expected machineBits = ${machineBits}`,
    );
  }
  return Object.freeze(parts.map((p) => Object.freeze({ name: p.name, bits: p.bits })));
}

/**
 * The tick a Unix-ms instant falls in (may be negative before the epoch): Go's
 * `t.UnixNano()/timeUnit - startTime/timeUnit`, both divisions truncated toward zero. From 1970
 * on that is the floor; before 1970 it rounds up, so with a start time that is not a whole
 * number of units before 1970 the ticks (and IDs) differ by one from a floored count, and the
 * unit around 1970-01-01T00:00:00Z (from -unit to +unit, exclusive) is one tick of two units.
 */
export function tickOf(layout: Layout, ms: number): number {
  return Math.trunc(ms / layout.timeUnitMs) - layout.epochTick;
}

/**
 * The Unix-ms instant of a tick as Go's ToTime gives it: (tick + epochTick) * timeUnitMs. From
 * 1970 on that is where the tick starts; for the ticks before 1970 (see tickOf) it is their last
 * instant, which makes a wait for such a tick longer than needed, never shorter.
 */
export function tickStartMs(layout: Layout, tick: number): number {
  return (tick + layout.epochTick) * layout.timeUnitMs;
}

/**
 * The bits of an ID below its time field: the sequence and the machine ID, each in its place
 * for the layout's field order. The two fit 53 bits (defineLayout checks), so this is exact
 * number arithmetic. No range checks: callers check (compose) or know (the generator).
 */
export function lowBits(layout: Layout, sequence: number, machine: number): number {
  return sequence * layout.sequenceScale + machine * layout.machineScale;
}

/** From `from` on, every ID of the layout has at least `digits` decimal digits. */
export interface DecimalLength {
  /** The decimal length reached: from 2 to 19. */
  readonly digits: number;
  /** The start of the first tick whose every ID has that many digits. */
  readonly from: Date;
}

/** Figures that follow from a layout. */
export interface LayoutLimits {
  /** How long the time field lasts: 2^timeBits units, in ms. */
  readonly lifetimeMs: number;
  /** The same in years of 365.25 days. */
  readonly lifetimeYears: number;
  /** The first instant whose ID no longer fits (generation fails from here on). */
  readonly endsAt: Date;
  /** The most IDs one generator can issue per second: 2^sequenceBits per tick. */
  readonly idsPerSecond: number;
  /** How many distinct machine IDs the layout has: 2^machineBits. */
  readonly machines: number;
  /**
   * The start of the first tick whose IDs are all past Number.MAX_SAFE_INTEGER (2^53 - 1), so
   * that a JS number can no longer hold them exactly; every earlier ID is at most 2^53 - 1.
   * null when the layout ends first.
   */
  readonly unsafeNumberFrom: Date | null;
  /**
   * The instants the decimal length of IDs grows, within the lifetime: from each `from` on,
   * every ID has at least `digits` digits (earlier, IDs with small low fields are shorter).
   */
  readonly decimalLengths: readonly DecimalLength[];
}

const YEAR_MS = 365.25 * 24 * 3600 * 1000;

/** The first tick whose smallest ID (low fields 0) is at least `value`, or null past the lifetime. */
function firstTickAtLeast(layout: Layout, value: bigint): number | null {
  const scale = 1n << layout.timeShift;
  const tick = (value + scale - 1n) / scale;
  return tick < BigInt(layout.tickLimit) ? Number(tick) : null;
}

/** A layout's shape as the reports show it (`compareLayouts`, the server's GET /layout): its name, field widths, unit and order. */
export function layoutShape(layout: Layout) {
  return {
    name: layout.name,
    timeBits: layout.timeBits,
    timeUnitMs: layout.timeUnitMs,
    sequenceBits: layout.sequenceBits,
    machineBits: layout.machineBits,
    fieldOrder: layout.fieldOrder,
  };
}

/** The figures of a layout: lifetime, end, capacity, and when its IDs outgrow JS numbers and each decimal width. */
export function layoutLimits(layout: Layout): LayoutLimits {
  const lifetimeMs = layout.tickLimit * layout.timeUnitMs;
  const unsafe = firstTickAtLeast(layout, 2n ** 53n);
  const decimalLengths: DecimalLength[] = [];
  for (let digits = 2; digits <= 19; digits++) {
    const tick = firstTickAtLeast(layout, 10n ** BigInt(digits - 1));
    if (tick === null) break;
    decimalLengths.push({ digits, from: new Date(tickStartMs(layout, tick)) });
  }
  return {
    lifetimeMs,
    lifetimeYears: lifetimeMs / YEAR_MS,
    endsAt: new Date(tickStartMs(layout, layout.tickLimit)),
    idsPerSecond: ((layout.maxSequence + 1) * 1000) / layout.timeUnitMs,
    machines: layout.maxMachine + 1,
    unsafeNumberFrom: unsafe === null ? null : new Date(tickStartMs(layout, unsafe)),
    decimalLengths,
  };
}
