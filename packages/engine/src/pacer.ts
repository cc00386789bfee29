/** How long the async paths may keep the event loop from turning. */
const TURN_AFTER_MS = 4;
/** How many IDs pass between looks at the time for that (a look costs a performance.now()). */
const TURN_CHECK_EVERY = 256;

/**
 * Says when the async paths should let the event loop turn before handing out more IDs. They
 * wait with a timer when a tick is used up, which turns it; but when IDs are asked for more
 * slowly than the layout allows (a ceiling that never binds, or a large `nextIds`), every ID is
 * ready at once and a caller awaiting them in a loop would hold the loop for as long as it runs.
 * So every TURN_CHECK_EVERY IDs, when the loop has not turned for TURN_AFTER_MS, `due()` is true
 * and the generator hands the next IDs out from setImmediate.
 *
 * The loop also turns without the generator: in a server every request arrives in a callback
 * of its own. A heartbeat (one setImmediate, armed at each look while IDs flow) notices those
 * turns; without it a server's generator forced a turn every 256 IDs once 4 ms had passed since
 * its last own timer, and queued the requests behind it (measured: 10% of calls delayed, by
 * 1-4 ms on average, at a fifth of the ceiling).
 */
export class Pacer {
  readonly #now: () => number;
  #turnedAt: number;
  #sinceCheck = 0;
  #beatArmed = false;
  readonly #beat = (): void => {
    this.#beatArmed = false;
    this.#turnedAt = this.#now();
  };

  /** `now`: monotonic ms (default performance.now; tests pass their own). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#turnedAt = now();
  }

  /** Counts one ID; true when the loop should turn before the next one is handed out. */
  due(): boolean {
    if (++this.#sinceCheck < TURN_CHECK_EVERY) return false;
    this.#sinceCheck = 0;
    if (!this.#beatArmed) {
      this.#beatArmed = true;
      setImmediate(this.#beat);
    }
    const now = this.#now();
    if (now - this.#turnedAt < TURN_AFTER_MS) return false;
    this.#turnedAt = now;
    return true;
  }

  /** The loop just turned (a timer or setImmediate ran the generator's drain). */
  turned(): void {
    this.#turnedAt = this.#now();
  }
}
