// The seed's counter, distributed: eight processes increment one Redis value by read-modify-write.
import { describe, expect, it } from 'vitest';
import { type Child, fixture, redisForSuite, uniqueName } from './helpers.js';

const PROCESSES = 8;
const EACH = 125;

describe('8 processes x 125 read-modify-write increments of one Redis value', () => {
  const suite = redisForSuite();

  async function run(mode: 'locked' | 'bare'): Promise<number> {
    const prefix = uniqueName('counter');
    const key = `${prefix}:value`;
    const children: Child[] = [];
    for (let i = 0; i < PROCESSES; i++) {
      children.push(fixture('counter.mjs', [suite.server.url, prefix, 'counter', key, String(EACH), mode]));
    }
    await Promise.all(children.map((c) => c.line('ready')));
    for (const c of children) c.child.stdin!.end('go\n');
    await Promise.all(children.map((c) => c.line('done')));
    expect(await Promise.all(children.map((c) => c.exited))).toEqual(Array(PROCESSES).fill(0));
    return Number(await suite.admin.get(key));
  }

  it('under the lock: exactly 1,000', async () => {
    expect(await run('locked')).toBe(PROCESSES * EACH);
  });

  it('without the lock the same increments lose updates (what the lock prevents)', async () => {
    expect(await run('bare')).toBeLessThan(PROCESSES * EACH);
  });
});
