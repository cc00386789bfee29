import {
  InvalidArgumentError,
  InvalidIdError,
  InvalidMachineIdError,
  InvalidSequenceError,
  OverTimeLimitError,
  received,
  StartTimeAheadError,
} from './errors.js';
import { type Layout, lowBits, tickOf, tickStartMs } from './layout.js';

/** 2^63 - 1: the largest ID any layout can produce (bit 63 stays 0). */
export const MAX_ID = (1n << 63n) - 1n;

/** Something that names an ID: a bigint, or its decimal string. Never a number (it would round past 2^53). */
export type IdInput = bigint | string;

const DECIMAL = /^[0-9]{1,19}$/;

/**
 * Reads an ID given as a bigint or a decimal string of up to 19 digits (leading zeros allowed),
 * and checks it lies in [0, 2^63 - 1].
 *
 * @throws InvalidIdError for a number, a negative or too-large value, or a string that is not decimal.
 */
export function parseId(input: IdInput): bigint {
  let id: bigint;
  if (typeof input === 'bigint') {
    id = input;
  } else if (typeof input === 'string') {
    if (!DECIMAL.test(input)) {
      throw new InvalidIdError(
        `expected an ID as a decimal string of 1 to 19 digits, received ${received(input)}`,
      );
    }
    id = BigInt(input);
  } else if (typeof input === 'number') {
    throw new InvalidIdError(
      `expected an ID as a bigint or a decimal string, received ${received(input)}: a number cannot hold a 64-bit ID exactly`,
    );
  } else {
    throw new InvalidIdError(`expected an ID as a bigint or a decimal string, received ${received(input)}`);
  }
  if (id < 0n || id > MAX_ID) {
    throw new InvalidIdError(`expected an ID from 0 to 2^63 - 1 (${MAX_ID}), received ${id}`);
  }
  return id;
}

/** An ID as its decimal string, the form for JSON, logs and URLs. */
export function formatId(id: IdInput): string {
  return parseId(id).toString();
}

/**
 * A `JSON.stringify` replacer that writes bigints as decimal strings, since JSON has no 64-bit
 * integers and `JSON.stringify` throws on a bigint.
 */
export function idReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** The fields of an ID. `time` is in ticks since the layout's epoch (Go's "time" key). */
export interface DecomposedId {
  /** The ID itself, parsed. */
  readonly id: bigint;
  /** Ticks since the epoch: multiply by the tick length and add the epoch for an instant (or use toTime). */
  readonly time: number;
  /** Which ID of its tick this was: from 0 to 2^sequenceBits - 1. */
  readonly sequence: number;
  /** The machine ID: from 0 to 2^machineBits - 1. */
  readonly machine: number;
  /** The machine field split into the layout's named parts, when it has them. */
  readonly parts?: Readonly<Record<string, number>>;
}

function checkFits(layout: Layout, id: bigint): void {
  if (id > layout.maxId) {
    throw new InvalidIdError(
      `expected an ID of the ${layout.name} layout, at most ${layout.maxId} (${layout.timeBits + layout.sequenceBits + layout.machineBits} bits), received ${id}`,
    );
  }
}

/** Splits an ID into its fields. @throws InvalidIdError when the input is not an ID of this layout. */
export function decomposeIn(layout: Layout, input: IdInput): DecomposedId {
  const id = parseId(input);
  checkFits(layout, id);
  // The low fields fit 53 bits (defineLayout checks), so plain number arithmetic is exact.
  const low = Number(id & ((1n << layout.timeShift) - 1n));
  const machine = Math.floor(low / layout.machineScale) % (layout.maxMachine + 1);
  const decomposed: DecomposedId = {
    id,
    time: Number(id >> layout.timeShift),
    sequence: Math.floor(low / layout.sequenceScale) % (layout.maxSequence + 1),
    machine,
  };
  if (!layout.machineParts) return decomposed;
  const parts: Record<string, number> = {};
  let shift = layout.machineBits;
  for (const part of layout.machineParts) {
    shift -= part.bits;
    parts[part.name] = Math.floor(machine / 2 ** shift) % 2 ** part.bits;
  }
  return { ...decomposed, parts };
}

/** The start of the tick an ID was issued in, as a Date. */
export function toTimeIn(layout: Layout, input: IdInput): Date {
  const id = parseId(input);
  checkFits(layout, id);
  return new Date(tickStartMs(layout, Number(id >> layout.timeShift)));
}

/** `composeIn`, `decomposeIn` and `toTimeIn` with the layout given once. */
export interface LayoutIdFunctions {
  /** See `composeIn`. */
  compose(time: Date | number, sequence: number, machine: number): bigint;
  /** See `decomposeIn`. */
  decompose(id: IdInput): DecomposedId;
  /** See `toTimeIn`. */
  toTime(id: IdInput): Date;
}

/** The package functions a flavour offers over its default layout: the three ID helpers bound to `layout`. */
export function layoutIdFunctions(layout: Layout): LayoutIdFunctions {
  return {
    compose: (time, sequence, machine) => composeIn(layout, time, sequence, machine),
    decompose: (id) => decomposeIn(layout, id),
    toTime: (id) => toTimeIn(layout, id),
  };
}

/** Reads an instant given as a Date or Unix ms. */
export function toMs(time: Date | number, what: string): number {
  const ms = time instanceof Date ? time.getTime() : time;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new InvalidArgumentError(
      `${what}: expected a valid Date or Unix milliseconds, received ${received(time)}`,
    );
  }
  return ms;
}

/**
 * Builds the ID for an instant, a sequence and a machine ID. Checks in Go's Compose order: time
 * before the epoch, time past the layout's end, sequence range, machine range.
 */
export function composeIn(layout: Layout, time: Date | number, sequence: number, machine: number): bigint {
  const tick = tickOf(layout, toMs(time, 'compose time'));
  if (tick < 0) {
    throw new StartTimeAheadError(
      `compose: the time ${new Date(toMs(time, 'time')).toISOString()} is before the start time ${new Date(layout.epochMs).toISOString()}`,
    );
  }
  if (tick >= layout.tickLimit) {
    throw new OverTimeLimitError(
      `compose: the time ${new Date(toMs(time, 'time')).toISOString()} is past the end of the ${layout.name} layout (${new Date(tickStartMs(layout, layout.tickLimit)).toISOString()})`,
    );
  }
  if (!Number.isInteger(sequence) || sequence < 0 || sequence > layout.maxSequence) {
    throw new InvalidSequenceError(
      `invalid sequence number: expected an integer from 0 to ${layout.maxSequence}, received ${received(sequence)}`,
    );
  }
  checkMachineId(layout, machine);
  return (BigInt(tick) << layout.timeShift) | BigInt(lowBits(layout, sequence, machine));
}

/**
 * Asserts that `machine` is a machine ID of the layout (Go's range check in `New`).
 * @throws InvalidMachineIdError unless `machine` is an integer in [0, 2^machineBits).
 */
export function checkMachineId(layout: Layout, machine: unknown): asserts machine is number {
  if (
    typeof machine !== 'number' ||
    !Number.isInteger(machine) ||
    machine < 0 ||
    machine > layout.maxMachine
  ) {
    throw new InvalidMachineIdError(
      `invalid machine id: expected an integer from 0 to ${layout.maxMachine} (${layout.machineBits} bits), received ${received(machine)}`,
    );
  }
}

/**
 * The machine ID made of the named parts of a split machine field, e.g. `{ datacenter: 1,
 * worker: 7 }` in Twitter's layout is 1 * 32 + 7 = 39. Every part of the layout must be given.
 *
 * @throws InvalidArgumentError when the layout has no parts, or for a name it does not have;
 * InvalidMachineIdError for a missing part or a value outside [0, 2^bits of that part).
 */
export function composeMachineId(layout: Layout, parts: Readonly<Record<string, number>>): number {
  if (!layout.machineParts) {
    throw new InvalidArgumentError(
      `machine parts: the ${layout.name} layout has one machine field; give the machine ID as a number`,
    );
  }
  if (typeof parts !== 'object' || parts === null) {
    throw new InvalidArgumentError(`machine parts: expected an object, received ${received(parts)}`);
  }
  const names = layout.machineParts.map((p) => p.name);
  const unknown = Object.keys(parts).filter((key) => !names.includes(key));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `machine parts: the ${layout.name} layout has ${names.join(' and ')}, received ${unknown.map((k) => JSON.stringify(k)).join(', ')}`,
    );
  }
  let machine = 0;
  for (const part of layout.machineParts) {
    const value = parts[part.name];
    const max = 2 ** part.bits - 1;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
      throw new InvalidMachineIdError(
        `invalid ${part.name} ID: expected an integer from 0 to ${max} (${part.bits} bits), received ${received(value)}`,
      );
    }
    machine = machine * 2 ** part.bits + value;
  }
  return machine;
}
