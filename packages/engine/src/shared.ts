import {
  GeneratorClosedError,
  InvalidArgumentError,
  MachineIdLostError,
  OverTimeLimitError,
  received,
} from './errors.js';
import { checkMachineId } from './id.js';
import type { Layout } from './layout.js';
import { idOf, isClaim, type MachineIdClaim } from './machine.js';
import type { StateCell } from './options.js';
import { type GeneratorState, initialState } from './state.js';

// The buffer: one 64-bit word of state, a fence reason, the holder's trust deadline, and the
// layout and machine ID the state belongs to (written once before the buffer is handed to
// other threads).
//
//   bytes 0..7    BigInt64  state: tick << sequenceBits | sequence; bit 63 set = fenced
//   bytes 8..11   Int32     why it was fenced (FENCE_LOST, FENCE_CLOSED, FENCE_OVER_LIMIT), written before bit 63
//   bytes 16..23  Float64   until when (Unix ms) the holder's claim is trusted; +Infinity if it does not lapse by time
//   bytes 24..79  Float64   version, timeBits, timeUnitMs, sequenceBits, machineBits, epochMs, machineId
const VERSION = 2;
const HEADER = [
  'version',
  'timeBits',
  'timeUnitMs',
  'sequenceBits',
  'machineBits',
  'epochMs',
  'machineId',
] as const;
const HEADER_AT = 24;
const BYTES = HEADER_AT + 8 * HEADER.length;
const slot = (name: (typeof HEADER)[number]): number => HEADER.indexOf(name);
const FENCE_BIT = 1n << 63n;
const LOW_63 = FENCE_BIT - 1n;
const FENCE_LOST = 1;
const FENCE_CLOSED = 2;
/** A taker read a time past the layout's end: as in Go, no taker issues another ID. */
const FENCE_OVER_LIMIT = 3;
/** Slots per commit at most: enough that four threads rarely contend, few enough that none hoards a tick. */
const MAX_RESERVATION = 64;

/**
 * The state of one machine ID's generator in shared memory. It is a plain object holding a
 * SharedArrayBuffer, so it passes to worker threads as is (`workerData`, `postMessage`); each
 * thread builds its own generator over it with `sharedStateCell`.
 */
export interface SharedGeneratorState {
  /** The state word, fence reason and the layout and machine ID it was made for (72 bytes). */
  readonly buffer: SharedArrayBuffer;
}

/**
 * Creates the shared state for a layout and a machine ID. Given a claim, the state starts after
 * the claim's `notBefore`, so threads that start before the holding generator is built cannot
 * issue IDs for a tick an earlier holder recorded.
 *
 * The thread that holds the claim builds its generator with the claim and `sharedStateCell`;
 * closing that generator, or losing its claim, fences every thread's generator on the state
 * (their calls fail with GeneratorClosedError or MachineIdLostError), so no thread issues IDs
 * under a machine ID that is no longer held.
 *
 * @throws InvalidArgumentError when `layout` is not a layout from `defineLayout`;
 * InvalidMachineIdError when the machine ID does not fit it.
 */
export function createSharedState(layout: Layout, machineId: number | MachineIdClaim): SharedGeneratorState {
  if (typeof layout !== 'object' || layout === null || typeof layout.maxSequence !== 'number') {
    throw new InvalidArgumentError(
      `layout: expected a layout from defineLayout, received ${received(layout)}`,
    );
  }
  const id = idOf(machineId);
  checkMachineId(layout, id);
  const buffer = new SharedArrayBuffer(BYTES);
  new Float64Array(buffer, 16, 1)[0] = Number.POSITIVE_INFINITY;
  const header = new Float64Array(buffer, HEADER_AT, HEADER.length);
  header.set([
    VERSION,
    layout.timeBits,
    layout.timeUnitMs,
    layout.sequenceBits,
    layout.machineBits,
    layout.epochMs,
    id,
  ]);
  const notBefore = isClaim(machineId) ? machineId.notBefore : undefined;
  const start = initialState(layout, notBefore);
  new BigInt64Array(buffer, 0, 1)[0] = pack(start, BigInt(layout.sequenceBits));
  return Object.freeze({ buffer });
}

function pack(state: GeneratorState, shift: bigint): bigint {
  return (BigInt(state.tick) << shift) | BigInt(state.sequence);
}

/**
 * A generator state cell over shared memory: `load` and `commit` are an atomic read and an
 * atomic compare-and-exchange of one 64-bit word, so the generators of many threads take
 * distinct slots without a lock. Each commit reserves several slots of the current tick
 * (`reservation`), which the thread's generator hands out one by one, never before their tick;
 * no slot of a tick that has not started is taken, so a thread waiting for the next tick holds
 * nothing and cannot push the state ahead of the clock.
 */
export class SharedStateCell implements StateCell {
  /** The machine ID the state belongs to: build each thread's generator with it. */
  readonly machineId: number;
  /** Slots one commit reserves: a sixteenth of a tick, from 1 to 64. */
  readonly reservation: number;
  readonly #word: BigInt64Array;
  readonly #reason: Int32Array;
  readonly #trust: Float64Array;
  readonly #header: Float64Array;
  readonly #shift: bigint;
  readonly #mask: bigint;
  // The word behind the state `load` last returned, so `commit` need not pack it again.
  #lastWord = -1n;
  #lastState: GeneratorState | undefined;

  /** The shared memory behind this cell: the same for every cell over one shared state. */
  get buffer(): SharedArrayBuffer {
    return this.#word.buffer as SharedArrayBuffer;
  }

  /** @throws InvalidArgumentError for anything but a createSharedState result. */
  constructor(shared: SharedGeneratorState) {
    const buffer = (shared as { buffer?: unknown } | null)?.buffer;
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength !== BYTES) {
      throw new InvalidArgumentError(
        `shared state: expected the object createSharedState returned (a ${BYTES}-byte SharedArrayBuffer in .buffer), received ${received(buffer ?? shared)}`,
      );
    }
    this.#word = new BigInt64Array(buffer, 0, 1);
    this.#reason = new Int32Array(buffer, 8, 1);
    this.#trust = new Float64Array(buffer, 16, 1);
    this.#header = new Float64Array(buffer, HEADER_AT, HEADER.length);
    if (this.#header[slot('version')] !== VERSION) {
      throw new InvalidArgumentError(
        `shared state: expected version ${VERSION}, received ${received(this.#header[slot('version')])}`,
      );
    }
    this.machineId = this.#field('machineId');
    const sequenceBits = this.#field('sequenceBits');
    this.#shift = BigInt(sequenceBits);
    this.#mask = (1n << this.#shift) - 1n;
    this.reservation = Math.max(1, Math.min(MAX_RESERVATION, 2 ** sequenceBits / 16));
  }

  /** True once the holding generator was closed or lost its claim. */
  get fenced(): boolean {
    return Atomics.load(this.#reason, 0) !== 0;
  }

  /** Until when (Unix ms) the holder's claim is trusted, as the holder last published it; +Infinity for a claim that does not lapse by time. */
  get trustedUntil(): number {
    return this.#trust[0] as number;
  }

  /**
   * Publishes until when (Unix ms, on the threads' wall clock) the holder's claim is certainly
   * held. Every thread's generator refuses to hand out an ID at or past it, so threads stop at
   * the claim's deadline even when the holder's thread is too busy to notice it lapsed. The
   * holder generator publishes this on its own; call it only for a claim you watch yourself.
   */
  trustUntil(ms: number): void {
    this.#trust[0] = ms;
  }

  /** The state as last committed by any thread (also once fenced). */
  load(): GeneratorState {
    // A fenced word still holds the last state: the holder records it after fencing.
    const word = Atomics.load(this.#word, 0) & LOW_63;
    if (word !== this.#lastWord || this.#lastState === undefined) {
      this.#lastWord = word;
      this.#lastState = { tick: Number(word >> this.#shift), sequence: Number(word & this.#mask) };
    }
    return this.#lastState;
  }

  /**
   * Stores `next` if no thread committed since `prev` was loaded; false sends the taker round
   * again.
   * @throws GeneratorClosedError or MachineIdLostError once the holding generator was closed or
   * lost its claim, or its claim's published trust deadline has passed.
   */
  commit(prev: GeneratorState, next: GeneratorState): boolean {
    const expected = prev === this.#lastState ? this.#lastWord : pack(prev, this.#shift);
    const found = Atomics.compareExchange(this.#word, 0, expected, pack(next, this.#shift));
    if (found === expected) return true;
    if (found < 0n) throw this.#fenceError();
    return false;
  }

  /**
   * Throws when no slot may be handed out at `nowMs`: the state is fenced, or the holder's
   * claim is not trusted at that time (see trustUntil).
   */
  check(nowMs: number): void {
    if (Atomics.load(this.#reason, 0) !== 0) throw this.#fenceError();
    const until = this.#trust[0] as number;
    if (nowMs >= until) {
      throw new MachineIdLostError(
        `machine ID ${this.machineId} of this shared state is not known to be held at ${new Date(nowMs).toISOString()}: the holder's claim was trusted until ${new Date(until).toISOString()} and has not been confirmed since; no IDs are issued under it`,
      );
    }
  }

  /** Refuses a generator whose layout or machine ID differs from the state's: its slots would mean other IDs. */
  attach(layout: Layout, machineId: number): void {
    const names = ['timeBits', 'timeUnitMs', 'sequenceBits', 'machineBits', 'epochMs'] as const;
    const have = Object.fromEntries(names.map((name) => [name, this.#field(name)]));
    if (names.some((name) => layout[name] !== have[name])) {
      const show = (l: Record<(typeof names)[number], number>) =>
        `time ${l.timeBits} bits of ${l.timeUnitMs} ms from ${l.epochMs}, sequence ${l.sequenceBits} bits, machine ${l.machineBits} bits`;
      throw new InvalidArgumentError(
        `shared state: it was created for ${show(have as Record<(typeof names)[number], number>)}; this generator's layout has ${show(layout)}`,
      );
    }
    if (machineId !== this.machineId) {
      throw new InvalidArgumentError(
        `shared state: it belongs to machine ID ${this.machineId}, received a generator for machine ID ${machineId}; pass cell.machineId`,
      );
    }
  }

  /** Sets the fence bit in the same word as the state, so no taker commits a slot after it. */
  fence(error: Error): void {
    if (this.fenced) return;
    const reason =
      error instanceof GeneratorClosedError
        ? FENCE_CLOSED
        : error instanceof OverTimeLimitError
          ? FENCE_OVER_LIMIT
          : FENCE_LOST;
    Atomics.store(this.#reason, 0, reason);
    for (;;) {
      const word = Atomics.load(this.#word, 0);
      if (word < 0n) return;
      const fenced = BigInt.asIntN(64, word | FENCE_BIT);
      if (Atomics.compareExchange(this.#word, 0, word, fenced) === word) return;
    }
  }

  #field(name: (typeof HEADER)[number]): number {
    return this.#header[slot(name)] as number;
  }

  #fenceError(): Error {
    const reason = Atomics.load(this.#reason, 0);
    if (reason === FENCE_OVER_LIMIT) {
      return new OverTimeLimitError(
        `over the time limit: a generator on this shared state read a time past the end of its layout; as in Go, no more IDs are issued under machine ID ${this.machineId}, even if the clock reads lower again`,
      );
    }
    return reason === FENCE_CLOSED
      ? new GeneratorClosedError(
          `the generator holding machine ID ${this.machineId} for this shared state was closed; create a new shared state to issue IDs`,
        )
      : new MachineIdLostError(
          `machine ID ${this.machineId} of this shared state is no longer held (the holding generator lost its claim); no IDs are issued under it`,
        );
  }
}

/** The cell each thread's generator takes as its `state` option. @throws InvalidArgumentError for anything but a createSharedState result. */
export function sharedStateCell(shared: SharedGeneratorState): SharedStateCell {
  return new SharedStateCell(shared);
}
