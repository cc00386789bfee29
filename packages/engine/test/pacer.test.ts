import { describe, expect, it } from 'vitest';
import { Pacer } from '../src/pacer.js';

// The pacer's time is injected; the event loop is the real one, since turns of it are what the
// pacer is about.

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Pacer', () => {
  it('asks for a turn once 4 ms pass with no turn of the loop (a tight loop of awaited IDs)', () => {
    let now = 0;
    const pacer = new Pacer(() => now);
    const asked: number[] = [];
    // 10 ms of IDs at 1 us each, no turn of the loop in between.
    for (let i = 0; i < 10_000; i++) {
      now += 0.001;
      if (pacer.due()) asked.push(now);
    }
    expect(asked.length).toBe(2);
    expect(asked[0]).toBeGreaterThanOrEqual(4);
    expect(asked[0]).toBeLessThan(4.3); // within one look (256 IDs) of the bound
  });

  it('does not ask when the loop turns on its own, as it does in a server (each request in a callback of its own)', async () => {
    let now = 0;
    const pacer = new Pacer(() => now);
    let asked = 0;
    // 40 ms of "requests": 300 IDs per callback, 1 ms of time in each, a turn between callbacks.
    for (let callback = 0; callback < 40; callback++) {
      for (let i = 0; i < 300; i++) {
        now += 1 / 300;
        if (pacer.due()) asked++;
      }
      await turn();
    }
    // Without the heartbeat the pacer saw no turn but its own, and asked every 4 ms: 9 times.
    expect(asked).toBe(0);
  });

  it('counts a turn the generator reports (turned) as well', () => {
    let now = 0;
    const pacer = new Pacer(() => now);
    let asked = 0;
    for (let i = 0; i < 10_000; i++) {
      now += 0.001;
      if (i % 1000 === 0) pacer.turned();
      if (pacer.due()) asked++;
    }
    expect(asked).toBe(0);
  });
});
