// Test scaffolding the engine's tests share with the flavours' (sonyflake and snowflake import it
// by path): clocks that run under a tight loop, and a heartbeat on the real event loop.
import type { Clock } from '../src/clock.js';

/**
 * A clock that moves forward a little on every read, like a real one under a tight loop, and
 * whose sleeps move it forward instead of waiting. `stepMs` is the most one read advances it.
 */
export function runningClock(startMs: number, stepMs = 0.02): Clock & { reads: number } {
  let now = startMs;
  const clock = {
    reads: 0,
    now() {
      clock.reads++;
      now += Math.random() * stepMs;
      return now;
    },
    sleepSync(ms: number) {
      if (ms > 0) now += ms;
    },
    async sleep(ms: number) {
      if (ms > 0) now += ms;
    },
  };
  return clock;
}

/**
 * Awaits `next` back to back for `ms` of this process's CPU time beside a 1 ms interval on the
 * event loop, and reports how many calls it made, the interval's beats and the longest gap
 * between two, in CPU ms: a generator that starved the loop would show few beats and a long gap.
 * CPU time, not wall time, so that a busy machine, which takes the CPU from this process between
 * beats without the generator holding the loop, does not count as starving it.
 */
export async function saturate(
  next: () => Promise<unknown>,
  ms: number,
  /** Calls to make at the least, however little CPU they took (a generator that waits on ticks). */
  minCalls = 0,
): Promise<{ count: number; beats: number; longestGap: number }> {
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  let beats = 0;
  let last = cpuMs();
  let longestGap = 0;
  const timer = setInterval(() => {
    const now = cpuMs();
    longestGap = Math.max(longestGap, now - last);
    last = now;
    beats++;
  }, 1);
  let count = 0;
  const until = cpuMs() + ms;
  while (cpuMs() < until || count < minCalls) {
    await next();
    count++;
  }
  clearInterval(timer);
  return { count, beats, longestGap };
}

/** Takes `count` IDs from `next` and says whether each was above the one before, and how many were distinct. */
export function takeInOrder(next: () => bigint, count: number): { increasing: boolean; distinct: number } {
  const ids = new Array<bigint>(count);
  let increasing = true;
  let previous = -1n;
  for (let i = 0; i < count; i++) {
    const id = next();
    if (id <= previous) increasing = false;
    ids[i] = previous = id;
  }
  return { increasing, distinct: new Set(ids).size };
}
