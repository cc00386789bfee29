import { GeneratorClosedError, InvalidArgumentError, MachineIdLostError, received } from './errors.js';
import type { StateCell } from './generator.js';
import { checkMachineId } from './id.js';
import type { Layout } from './layout.js';
import { isClaim, type MachineIdClaim } from './machine.js';
import { type GeneratorState, initialState } from './state.js';

// The buffer: one 64-bit word of state, a fence reason, and the layout and machine ID the
// state belongs to (written once before the buffer is handed to other threads).
//
//   bytes 0..7    BigInt64  state: elapsed << sequenceBits | sequence; bit 63 set = fenced
//   bytes 8..11   Int32     why it was fenced (FENCE_LOST or FENCE_CLOSED), written before bit 63
//   bytes 16..71  Float64   version, timeBits, timeUnitMs, sequenceBits, machineBits, epochMs, machineId
const VERSION = 1;
const HEADER = ['version', 'timeBits', 'timeUnitMs', 'sequenceBits', 'machineBits', 'epochMs', 'machineId'];
const BYTES = 16 + 8 * HEADER.length;
const FENCE_BIT = 1n << 63n;
const LOW_63 = FENCE_BIT - 1n;
const FENCE_LOST = 1;
const FENCE_CLOSED = 2;

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
  const id = isClaim(machineId) ? machineId.machineId : machineId;
  checkMachineId(layout, id);
  const buffer = new SharedArrayBuffer(BYTES);
  const header = new Float64Array(buffer, 16, HEADER.length);
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
  return (BigInt(state.elapsed) << shift) | BigInt(state.sequence);
}

/**
 * A generator state cell over shared memory: `load` and `commit` are an atomic read and an
 * atomic compare-and-exchange of one 64-bit word, so the generators of many threads take
 * distinct slots without a lock. A thread that must wait for the next tick has already taken
 * its slot, so nothing is held while it waits.
 */
export class SharedStateCell implements StateCell {
  /** The machine ID the state belongs to: build each thread's generator with it. */
  readonly machineId: number;
  readonly #word: BigInt64Array;
  readonly #reason: Int32Array;
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
    this.#header = new Float64Array(buffer, 16, HEADER.length);
    if (this.#header[0] !== VERSION) {
      throw new InvalidArgumentError(
        `shared state: expected version ${VERSION}, received ${received(this.#header[0])}`,
      );
    }
    this.machineId = this.#header[6]!;
    this.#shift = BigInt(this.#header[3]!);
    this.#mask = (1n << this.#shift) - 1n;
  }

  /** True once the holding generator was closed or lost its claim. */
  get fenced(): boolean {
    return Atomics.load(this.#word, 0) < 0n;
  }

  /** The state as last committed by any thread (also once fenced). */
  load(): GeneratorState {
    // A fenced word still holds the last state: the holder records it after fencing.
    const word = Atomics.load(this.#word, 0) & LOW_63;
    if (word !== this.#lastWord || this.#lastState === undefined) {
      this.#lastWord = word;
      this.#lastState = { elapsed: Number(word >> this.#shift), sequence: Number(word & this.#mask) };
    }
    return this.#lastState;
  }

  /**
   * Stores `next` if no thread committed since `prev` was loaded; false sends the taker round
   * again.
   * @throws GeneratorClosedError or MachineIdLostError once the holding generator was closed or
   * lost its claim.
   */
  commit(prev: GeneratorState, next: GeneratorState): boolean {
    const expected = prev === this.#lastState ? this.#lastWord : pack(prev, this.#shift);
    const found = Atomics.compareExchange(this.#word, 0, expected, pack(next, this.#shift));
    if (found === expected) return true;
    if (found < 0n) throw this.#fenceError();
    return false;
  }

  /** Refuses a generator whose layout or machine ID differs from the state's: its slots would mean other IDs. */
  attach(layout: Layout, machineId: number): void {
    const h = this.#header;
    const want = [
      layout.timeBits,
      layout.timeUnitMs,
      layout.sequenceBits,
      layout.machineBits,
      layout.epochMs,
    ];
    const have = [h[1], h[2], h[3], h[4], h[5]];
    if (want.some((value, i) => value !== have[i])) {
      throw new InvalidArgumentError(
        `shared state: it was created for time ${have[0]} bits of ${have[1]} ms from ${have[4]}, sequence ${have[2]} bits, machine ${have[3]} bits; this generator's layout has time ${want[0]} bits of ${want[1]} ms from ${want[4]}, sequence ${want[2]} bits, machine ${want[3]} bits`,
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
    Atomics.store(this.#reason, 0, error instanceof GeneratorClosedError ? FENCE_CLOSED : FENCE_LOST);
    for (;;) {
      const word = Atomics.load(this.#word, 0);
      if (word < 0n) return;
      const fenced = BigInt.asIntN(64, word | FENCE_BIT);
      if (Atomics.compareExchange(this.#word, 0, word, fenced) === word) return;
    }
  }

  #fenceError(): Error {
    return Atomics.load(this.#reason, 0) === FENCE_CLOSED
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
