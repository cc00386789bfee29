// Shared by the lease tests of every store (machine-etcd, machine-redis import it by path).
import { FakeClock } from '@ids/engine';
import type { Scheduler } from '../src/keeper.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A Scheduler on the engine's FakeClock: time moves only through `advance`, which runs the
 * timers that fall due in order, letting promises settle between them.
 */
export class FakeScheduler implements Scheduler {
  readonly clock: FakeClock;
  #timers: Timer[] = [];
  #seq = 0;
  /** Every duration asked for, in order. */
  readonly requested: number[] = [];

  readonly #start: number;

  constructor(start = 1_000_000) {
    this.clock = new FakeClock(start);
    this.#start = start;
  }

  now(): number {
    return this.clock.now();
  }

  /** Unix ms: `wallStartMs` (default: real time at construction) plus the fake time moved since. */
  wallStartMs = Date.now();
  wallNow(): number {
    return this.wallStartMs + (this.clock.now() - this.#start);
  }

  setTimer(fn: () => void, ms: number): () => void {
    this.requested.push(ms);
    const timer = { at: this.now() + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Timers still to fire. */
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Durations of the timers still to fire, soonest first. */
  get pendingDurations(): number[] {
    return this.#timers
      .filter((t) => !t.cancelled)
      .sort((a, b) => a.at - b.at)
      .map((t) => t.at - this.now());
  }

  async advance(ms: number): Promise<void> {
    const until = this.now() + ms;
    for (;;) {
      await flush();
      const next = this.#timers
        .filter((t) => !t.cancelled && t.at <= until)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      next.cancelled = true;
      this.clock.set(next.at);
      next.fn();
    }
    this.clock.set(until);
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
