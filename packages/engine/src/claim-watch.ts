import { checkNonNegative } from './check.js';
import { GeneratorClosedError, InvalidArgumentError, MachineIdLostError, received } from './errors.js';
import { checkMachineId } from './id.js';
import { type Layout, tickStartMs } from './layout.js';
import { idOf, isClaim, type MachineIdClaim, releaseQuietly } from './machine.js';

/** Default for a claim's `recordIntervalMs`. */
export const DEFAULT_RECORD_INTERVAL_MS = 1000;
/**
 * How often a holder on a shared state publishes its claim's trust deadline. The deadline only
 * moves forward (each confirmed renewal), so publishing late never lets a thread issue past
 * it; it only stops the threads early when the holder's thread is blocked, which is the point.
 */
const TRUST_PUBLISH_MS = 100;

/** What a ClaimWatch needs of the generator it serves. */
export interface ClaimHost {
  /** The generator's layout (machine IDs are checked against it). */
  readonly layout: Layout;
  /** Issue IDs under `machineId` from now on (the state cell is told first, and may refuse). */
  useMachine(machineId: number): void;
  /**
   * Raise the state so that no ID is issued for a tick at or before `notBeforeMs`, and allow
   * waits for it up to `leadMs` longer than the clock-back bound (the claim's record horizon).
   */
  seed(notBeforeMs: number, leadMs: number): void;
  /** The latest tick any ID was (or may have been) issued in. */
  lastTick(): number;
  /** Stop every other taker of a shared state: the machine ID is no longer held. */
  fence(error: Error): void;
  /** Tell the other takers of a shared state until when (Unix ms on the generator's clock) the claim is held; absent for a state of one generator. */
  readonly publishTrust?: (untilMs: number) => void;
  /** The generator's clock. */
  now(): number;
}

/**
 * The life of a generator's machine ID: adopt it (a number, or a claim to watch), fence when a
 * claim is lost, renew, record the time reached, release on close. Kept apart from the
 * generator's hot path; the generator asks `check()` before each ID.
 */
export class ClaimWatch {
  readonly #host: ClaimHost;
  readonly #onError: (error: unknown) => void;
  #claim: MachineIdClaim | undefined;
  /** Why IDs may not be issued now (claim lost, generator closed), or null. */
  #lost: Error | null = null;
  #closed = false;
  #recordTimer: ReturnType<typeof setInterval> | undefined;
  #trustTimer: ReturnType<typeof setInterval> | undefined;
  #recorded = -1;

  /**
   * Adopts `source` at once (its range was checked with the generator's options); throws what
   * adopting throws (see IdGenerator's constructor).
   */
  constructor(host: ClaimHost, source: number | MachineIdClaim, onError: (error: unknown) => void) {
    this.#host = host;
    this.#onError = onError;
    this.#adopt(source, true);
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The claim held, if the machine ID came as one. */
  get claim(): MachineIdClaim | undefined {
    return this.#claim;
  }

  /**
   * Throws why no ID may be issued now. A claim that can tell it has lapsed aborts its signal
   * from `verify()`, which sets the reason at once, before this returns.
   */
  check(): void {
    if (this.#lost === null) this.#claim?.verify?.();
    if (this.#lost !== null) throw this.#lost;
  }

  /** Stops for good: fences other takers, records the time reached, releases the claim. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new GeneratorClosedError('the generator is closed; create a new one to issue IDs');
    this.#lost = closed;
    clearInterval(this.#recordTimer);
    clearInterval(this.#trustTimer);
    const claim = this.#claim;
    if (!claim) return;
    // Other threads sharing the state stop first, so the time recorded covers every ID issued.
    this.#host.fence(closed);
    await this.#record(claim);
    await claim.release();
  }

  #adopt(source: number | MachineIdClaim, inRange = false): void {
    if (this.#closed) {
      void releaseQuietly(source, this.#onError);
      return;
    }
    // A renewed claim's ID is new input: one that does not fit would spill into the sequence
    // field and collide with other machines' IDs.
    if (!inRange) checkMachineId(this.#host.layout, idOf(source));
    if (!isClaim(source)) {
      this.#host.useMachine(source);
      return;
    }
    this.#host.useMachine(source.machineId);
    this.#claim = source;
    if (source.notBefore !== undefined) {
      const lead = source.notBeforeLeadMs ?? 0;
      if (typeof lead !== 'number' || !Number.isFinite(lead) || lead < 0) {
        throw new InvalidArgumentError(
          `notBeforeLeadMs: expected a finite number of ms, 0 or more, received ${received(lead)}`,
        );
      }
      this.#host.seed(source.notBefore, lead);
    }
    this.#lost = null;
    if (source.record) {
      clearInterval(this.#recordTimer);
      const every = checkNonNegative(
        source.recordIntervalMs ?? DEFAULT_RECORD_INTERVAL_MS,
        'recordIntervalMs',
      );
      this.#recordTimer = setInterval(() => void this.#record(source), every);
      this.#recordTimer.unref();
    }
    this.#watchTrust(source);
    const signal = source.signal;
    if (signal) {
      if (signal.aborted) this.#fence(source);
      else signal.addEventListener('abort', () => this.#fence(source), { once: true });
    }
  }

  #fence(claim: MachineIdClaim): void {
    if (claim !== this.#claim || this.#closed) return;
    const reason = claim.signal?.reason;
    const lost = new MachineIdLostError(
      `machine ID ${claim.machineId} is no longer held${reason instanceof Error ? `: ${reason.message}` : ''}; no IDs are issued until it is claimed again`,
      { cause: reason },
    );
    this.#lost = lost;
    clearInterval(this.#recordTimer);
    clearInterval(this.#trustTimer);
    this.#host.fence(lost);
    if (claim.renew) {
      claim
        .renew()
        .then((next) => {
          try {
            this.#adopt(next);
          } catch (error) {
            // A renewed claim this generator cannot use (e.g. its shared state is fenced) must not stay held.
            void releaseQuietly(next, this.#onError);
            throw error;
          }
        })
        .catch((error) => this.#onError(error));
    }
  }

  /** Publishes the claim's trust deadline to a shared state now and every TRUST_PUBLISH_MS. */
  #watchTrust(claim: MachineIdClaim): void {
    const publish = this.#host.publishTrust;
    clearInterval(this.#trustTimer);
    if (!publish || typeof claim.trustedForMs !== 'function') return;
    const beat = (): void => {
      if (claim !== this.#claim || this.#lost !== null) return;
      // Whole ms down: a claim usually counts its trust on Date.now(), which is this sub-ms
      // clock floored; adding it to the unfloored reading would trust up to 1 ms past the
      // claim's own deadline (a tick starting there could be issued).
      publish(Math.floor(this.#host.now()) + (claim.trustedForMs?.() ?? 0));
    };
    beat();
    this.#trustTimer = setInterval(beat, TRUST_PUBLISH_MS);
    this.#trustTimer.unref();
  }

  async #record(claim: MachineIdClaim): Promise<void> {
    const tick = this.#host.lastTick();
    if (!claim.record || tick === this.#recorded || claim !== this.#claim) return;
    try {
      // The last millisecond of the tick: a successor's first tick must come after all of it.
      await claim.record(tickStartMs(this.#host.layout, tick + 1) - 1);
      this.#recorded = tick;
    } catch (error) {
      this.#onError(error);
    }
  }
}
