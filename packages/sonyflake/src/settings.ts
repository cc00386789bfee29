import {
  type Clock,
  type GeneratorSettings,
  InvalidBitsTimeError,
  type Layout,
  type MachineIdCheck,
  type MachineIdSource,
} from '@ids/engine';
import {
  checkFieldBits,
  checkSettingsObject,
  checkStartTime,
  clockOption,
  defineCheckedFields,
  maxTimeBits,
} from '@ids/engine/internal';

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
 * `randomSequenceBound` (GeneratorSettings) costs more here than on a Snowflake: a tick holds
 * (bound - 1) / 2 fewer of its 256 IDs on average, 49.5 (19%) for Leaf's 100, so keep it small.
 */
export interface SonyflakeSettings extends GeneratorSettings {
  /** Bits of the sequence number. Default 8; 0 means the default; valid 0..30. Else InvalidBitsSequenceError. */
  readonly bitsSequence?: number;
  /** Bits of the machine ID. Default 16; 0 means the default; valid 0..30. Else InvalidBitsMachineIdError. */
  readonly bitsMachineId?: number;
  /**
   * The time unit in milliseconds (Go takes a Duration). Default 10; 0 means the default; a
   * whole number of ms, 1 or more. Else InvalidTimeUnitError.
   * The time field gets 63 - bitsSequence - bitsMachineId bits, which must be 32 or more (else
   * InvalidBitsTimeError), as in Go; it is cut to what ends within the Date range (see
   * sonyflakeLayout). A unit so long that not one tick ends within it is InvalidLayoutError.
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
   * `auto` chain as the provider, every step included (EC2 metadata when opted in): IDS_MACHINE_ID,
   * a StatefulSet ordinal, the private IPv4 address held as a host claim, then a host claim
   * (unique on this host only; announced with a process warning, code IDS_HOST_CLAIM). Without
   * @ids/machine-file installed, MissingPackageError.
   * Provider errors become MachineIdProviderError with the original as `cause`; an ID outside
   * [0, 2^bitsMachineId) is InvalidMachineIdError.
   */
  readonly machineId?: MachineIdSource | 'auto';
  /** Asked once with the machine ID; false means MachineIdRejectedError (Go: ErrInvalidMachineID). */
  readonly checkMachineId?: MachineIdCheck;
}

/** Go's rule for the bit lengths and the time unit: 0 (or nothing) means the default. */
function orDefault(value: number | undefined, fallback: number): number {
  return value === undefined || value === 0 ? fallback : value;
}

/**
 * The layout of the settings, validated in Go's order: bitsSequence, bitsMachineId, timeUnit,
 * startTime (against `settings.clock`), then the time bits that remain (Go's floor: 32 or more).
 * The other settings are the Sonyflake class's to check.
 *
 * The time field is Go's 63 - bitsSequence - bitsMachineId bits, limited to what ends within the
 * Date range (year 275760): with 13 or fewer low bits in 10 ms units, or units of an hour, Go's
 * field would outlast every Date. The IDs are Go's bit for bit; only an ID of a time a Date
 * cannot hold is out of range (OverTimeLimitError, InvalidIdError) instead of valid.
 */
export function sonyflakeLayout(settings: SonyflakeSettings = {}): Layout {
  const s = checkSettingsObject(settings);
  return layoutWithClock(s, clockOption(s.clock));
}

/** sonyflakeLayout for settings whose clock was checked (the Sonyflake class checks it with the rest). */
export function layoutWithClock(settings: SonyflakeSettings, clock: Clock): Layout {
  const { bitsSequence, bitsMachineId, timeUnit, startTime } = settings;
  const sequenceBits = orDefault(bitsSequence, DEFAULT_BITS_SEQUENCE);
  const machineBits = orDefault(bitsMachineId, DEFAULT_BITS_MACHINE_ID);
  const timeUnitMs = orDefault(timeUnit, DEFAULT_TIME_UNIT);
  checkFieldBits(sequenceBits, machineBits, timeUnitMs);
  const epochMs = checkStartTime(startTime ?? DEFAULT_START_TIME, clock, 'start time');
  const goTimeBits = 63 - sequenceBits - machineBits;
  if (goTimeBits < 32) {
    throw new InvalidBitsTimeError(
      `bit length for time must be 32 or more: 63 - ${sequenceBits} sequence bits - ${machineBits} machine bits leaves ${goTimeBits}`,
    );
  }
  return defineCheckedFields({
    name: 'sonyflake',
    // At least 1: a unit so long that no tick ends within the Date range is refused by defineLayout.
    timeBits: Math.max(1, Math.min(goTimeBits, maxTimeBits(epochMs, timeUnitMs))),
    timeUnitMs,
    sequenceBits,
    machineBits,
    epochMs,
  });
}
