import { type Layout, lowBits } from './layout.js';

/** Sequences up to this many values get a precomputed table of low bits (16 Ki BigInts, about 0.5 MB at most). */
const LOW_TABLE_LIMIT = 2 ** 14;

/**
 * Turns a slot (tick, sequence) into the ID under the current machine ID.
 *
 * Every ID allocates; at millions of IDs a second each allocation saved means fewer young-
 * generation collections, whose pauses are what cost a 1 ms tick its last slots. So the time
 * field is shifted once per tick (a tick holds many IDs), and the low bits (sequence and
 * machine) are made once per machine ID for every sequence value where that table is small:
 * an ID is then one BigInt `|`.
 */
export class IdBits {
  readonly #layout: Layout;
  #machineLowBits = 0;
  #lowBitsBySequence: bigint[] | undefined;
  #timeBitsOfTick = 0n;
  #tickOfTimeBits = -1;

  constructor(layout: Layout) {
    this.#layout = layout;
  }

  /** IDs from now on carry `machineId` (already checked against the layout). */
  useMachine(machineId: number): void {
    const layout = this.#layout;
    this.#machineLowBits = lowBits(layout, 0, machineId);
    const size = layout.maxSequence + 1;
    // Filled as sequences are first used: building all 4,096 entries of a snowflake up front
    // was about a fifth of the cost of importing the package and making a first ID.
    this.#lowBitsBySequence = size > LOW_TABLE_LIMIT ? undefined : new Array<bigint>(size);
  }

  /** The ID of the given tick and sequence. */
  of(tick: number, sequence: number): bigint {
    if (tick !== this.#tickOfTimeBits) {
      this.#tickOfTimeBits = tick;
      this.#timeBitsOfTick = BigInt(tick) << this.#layout.timeShift;
    }
    const table = this.#lowBitsBySequence;
    if (table === undefined) {
      return this.#timeBitsOfTick | BigInt(sequence * this.#layout.sequenceScale + this.#machineLowBits);
    }
    let low = table[sequence];
    if (low === undefined) {
      low = BigInt(sequence * this.#layout.sequenceScale + this.#machineLowBits);
      table[sequence] = low;
    }
    return this.#timeBitsOfTick | low;
  }
}
