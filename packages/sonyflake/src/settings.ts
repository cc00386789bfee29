import {
  defineLayout,
  type GeneratorSettings,
  InvalidBitsMachineIdError,
  InvalidBitsSequenceError,
  InvalidBitsTimeError,
  InvalidStartTimeError,
  InvalidTimeUnitError,
  type Layout,
  type MachineIdCheck,
  type MachineIdSource,
  StartTimeAheadError,
  wallClock,
} from '@ids/engine';
import { checkClock, received } from '@ids/engine/internal';

/** 2014-09-01T00:00:00Z: the start time of Go's v1 and of the seed documents. Our default. */
export const DEFAULT_START_TIME = Date.UTC(2014, 8, 1);
/** 2025-01-01T00:00:00Z: the default start time of Go's sonyflake v2. */
export const GO_V2_START_TIME = Date.UTC(2025, 0, 1);
/** Default `bitsSequence`, as in Go: 256 IDs per 10 ms tick. */
export const DEFAULT_BITS_SEQUENCE = 8;
/** Default `bitsMachineId`, as in Go: room for the low 16 bits of a private IPv4 address. */
export const DEFAULT_BITS_MACHINE_ID = 16;
/** 10 ms, in ms. */
export const DEFAULT_TIME_UNIT = 10;

/**
 * Go v2's `Settings`, with the same defaults, ranges and errors, plus the clock and the
 * clock-back bound. Zero means "the default" for the bit lengths and the time unit, as in Go.
 */
export interface SonyflakeSettings extends GeneratorSettings {
  /** Bits of the sequence number. Default 8; 0 means the default; valid 0..30. Else InvalidBitsSequenceError. */
  readonly bitsSequence?: number;
  /** Bits of the machine ID. Default 16; 0 means the default; valid 0..30. Else InvalidBitsMachineIdError. */
  readonly bitsMachineId?: number;
  /**
   * The time unit in milliseconds (Go takes a Duration). Default 10; 0 means the default; a
   * whole number of ms, 1 or more. Else InvalidTimeUnitError.
   * The time field gets 63 - bitsSequence - bitsMachineId bits, which must be 32 or more (else InvalidBitsTimeError).
   */
  readonly timeUnit?: number;
  /**
   * The instant time 0 stands for, a Date or Unix ms. Default DEFAULT_START_TIME (2014-09-01);
   * GO_V2_START_TIME is Go v2's. Must not be after the clock's now (StartTimeAheadError); an
   * invalid date is InvalidStartTimeError.
   */
  readonly startTime?: Date | number;
  /**
   * The machine ID: a number, a claim, or a provider `({ bits }) => id` (async allowed with
   * `create`). Default: IDS_MACHINE_ID from the environment when set (a decimal integer from 0
   * to 2^bitsMachineId - 1, else InvalidMachineIdError), else Go's rule, the low 16 bits of the
   * first private IPv4 address (fails with NoPrivateAddressError, as the `cause` of a
   * MachineIdProviderError, on hosts without one; its message says what to set).
   *
   * `'auto'` (with `create` only; AsyncSettingError in the constructor) runs @ids/machine-file's
   * auto chain: IDS_MACHINE_ID, the private IPv4 address held as a host claim, then a host claim
   * (unique on this host only; announced with a process warning, code IDS_HOST_CLAIM).
   * Provider errors become MachineIdProviderError with the original as `cause`; an ID outside
   * [0, 2^bitsMachineId) is InvalidMachineIdError.
   */
  readonly machineId?: MachineIdSource | 'auto';
  /** Asked once with the machine ID; false means MachineIdRejectedError (Go: ErrInvalidMachineID). */
  readonly checkMachineId?: MachineIdCheck;
  /**
   * Start each tick the clock opens at a random sequence below this bound (see
   * GeneratorOptions.randomSequenceBound). Such a tick holds (bound - 1) / 2 fewer of its 256
   * IDs on average: 49.5 (19%) for Leaf's 100, so keep it small here. Default 0 (off); up to 256.
   */
  readonly randomSequenceBound?: number;
}

function bits(value: number | undefined, fallback: number): number | undefined {
  return value === undefined || value === 0 ? fallback : value;
}

/**
 * Validates everything but the machine ID, in Go's order: bitsSequence, bitsMachineId,
 * timeUnit, startTime, then the time bits that remain.
 */
export function sonyflakeLayout(settings: SonyflakeSettings = {}): Layout {
  const clock = settings.clock === undefined ? wallClock : checkClock(settings.clock);
  const sequenceBits = bits(settings.bitsSequence, DEFAULT_BITS_SEQUENCE);
  if (!Number.isInteger(sequenceBits) || sequenceBits! < 0 || sequenceBits! > 30) {
    throw new InvalidBitsSequenceError(
      `invalid bit length for sequence number: expected an integer from 0 to 30, received ${received(settings.bitsSequence)}`,
    );
  }
  const machineBits = bits(settings.bitsMachineId, DEFAULT_BITS_MACHINE_ID);
  if (!Number.isInteger(machineBits) || machineBits! < 0 || machineBits! > 30) {
    throw new InvalidBitsMachineIdError(
      `invalid bit length for machine id: expected an integer from 0 to 30, received ${received(settings.bitsMachineId)}`,
    );
  }
  const unit = bits(settings.timeUnit, DEFAULT_TIME_UNIT);
  if (!Number.isInteger(unit) || unit! < 1) {
    throw new InvalidTimeUnitError(
      `invalid time unit: expected a whole number of milliseconds, 1 or more (or 0 for the default 10), received ${received(settings.timeUnit)}`,
    );
  }
  const start = settings.startTime ?? DEFAULT_START_TIME;
  const startMs = start instanceof Date ? start.getTime() : start;
  if (typeof startMs !== 'number' || !Number.isInteger(startMs)) {
    throw new InvalidStartTimeError(
      `invalid start time: expected a valid Date or whole Unix milliseconds, received ${received(start)}`,
    );
  }
  const now = clock.now();
  if (startMs > now) {
    throw new StartTimeAheadError(
      `start time is ahead: ${new Date(startMs).toISOString()} is after now (${new Date(now).toISOString()}); expected a start time in the past`,
    );
  }
  const timeBits = 63 - sequenceBits! - machineBits!;
  if (timeBits < 32) {
    throw new InvalidBitsTimeError(
      `bit length for time must be 32 or more: 63 - ${sequenceBits} sequence bits - ${machineBits} machine bits leaves ${timeBits}`,
    );
  }
  return defineLayout({
    name: 'sonyflake',
    timeBits,
    timeUnitMs: unit!,
    sequenceBits: sequenceBits!,
    machineBits: machineBits!,
    epochMs: startMs,
  });
}
