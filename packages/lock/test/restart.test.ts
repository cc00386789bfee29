// Redis restarted without persistence forgets every lock, line and fence counter while locks are
// held and waited for. After it returns: never two holders at once, and fences still increase.
import { describe, expect, it } from 'vitest';
import { redisLocks } from '../src/redis.js';
import { aborted, redisForSuite, sleep, uniqueName, until, WAIT_MS } from './helpers.js';

interface Holding {
  readonly fence: bigint;
  readonly start: number;
  end: number;
}

describe('Redis restarted empty while locks are held and waited for', () => {
  const suite = redisForSuite();

  it('no two holders of one name at once, and fences keep increasing', async () => {
    const prefix = uniqueName('restart');
    const holdings: Holding[] = [];
    let running = true;
    const workers = await Promise.all(
      Array.from({ length: 4 }, () => redisLocks({ url: suite.server.url, prefix, pollMs: 200 })),
    );
    const loops = workers.map(async (locks) => {
      while (running) {
        let lock: Awaited<ReturnType<typeof locks.acquire>>;
        try {
          lock = await locks.acquire('r', { ttlMs: 1000, waitMs: WAIT_MS });
        } catch (error) {
          if (!running) return;
          throw error;
        }
        const holding: Holding = {
          fence: lock.fence,
          start: performance.now(),
          end: Number.POSITIVE_INFINITY,
        };
        holdings.push(holding);
        // The work: a little time, cut short when the lock stops being trusted.
        const lost = aborted(lock.signal).then((at) => ({ at }));
        const done = await Promise.race([sleep(400).then(() => undefined), lost]);
        holding.end = done ? done.at : performance.now();
        await lock.release().catch(() => undefined);
      }
    });
    await until(() => holdings.length >= 3, WAIT_MS, 'three holdings before the restart');
    const before = holdings.length;
    await suite.server.stop();
    await suite.server.start();
    await until(() => holdings.length >= before + 5, WAIT_MS, 'five holdings after the restart');
    running = false;
    await Promise.all(loops);
    await Promise.all(workers.map((w) => w.close()));

    const byStart = [...holdings].sort((a, b) => a.start - b.start);
    for (let i = 1; i < byStart.length; i++) {
      const prev = byStart[i - 1] as Holding;
      const cur = byStart[i] as Holding;
      expect(cur.start, `holding ${i} began before holding ${i - 1} ended`).toBeGreaterThanOrEqual(prev.end);
      expect(cur.fence).toBeGreaterThan(prev.fence);
    }
  });
});
