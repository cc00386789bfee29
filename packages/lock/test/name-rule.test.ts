// One name rule, enforced before anything is sent, the same on Redis, etcd and ZooKeeper, and
// the README states it as the code declares it (nameRuleText() from NAME_REFUSED and friends).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ZkSession } from '@ids/machine-zookeeper/internal';
import { hasZookeeper, serverForSuite, startEtcd, startZookeeper } from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { etcdLocks } from '../src/etcd.js';
import type { Locks } from '../src/index.js';
import { NAME_REFUSED, nameRuleText } from '../src/options.js';
import { redisLocks } from '../src/redis.js';
import { zookeeperLocks } from '../src/zookeeper.js';
import { failure, redisForSuite, uniqueName } from './helpers.js';

/** Names the rule refuses: C1 controls, an emoji, private use, reserved segments, and the old cases. */
const REFUSED: [string, string][] = [
  ['U+0085 (NEL, C1)', 'a\u0085b'],
  ['U+009F (C1)', 'a\u009fb'],
  ['an emoji', 'lock-🔒'],
  ['private use U+E000', 'a\ue000'],
  ['a noncharacter U+FFFF', 'a\uffff'],
  ['a lone surrogate', 'a\ud800'],
  ['"."', '.'],
  ['".."', '..'],
  ['a newline', 'a\nb'],
  ['DEL', 'a\u007f'],
  ['the separator', 'orders/42'],
  ['empty', ''],
  ['past 512 bytes', 'é'.repeat(257)],
];
/** Names every store takes. */
const TAKEN = ['orders:42', 'Grüße', 'a b', 'x'.repeat(512), '\u00a0nbsp', 'cjk-漢字', '...'];

/** Each name refused with InvalidArgumentError, then nothing sent (`untouched`), and each good name held. */
async function ruleHolds(locks: Locks, untouched: () => Promise<void>) {
  for (const [what, name] of REFUSED) {
    const error = await failure(locks.acquire(name, { waitMs: 2000 }));
    expect(error, what).toMatchObject({ code: 'ERR_IDS_INVALID_ARGUMENT', option: 'name' });
    expect(error.message).toContain(`expected ${nameRuleText()}, received`);
    expect(await failure(locks.tryAcquire(name)), what).toMatchObject({ code: 'ERR_IDS_INVALID_ARGUMENT' });
  }
  await untouched();
  for (const name of TAKEN) {
    const lock = await locks.acquire(name, { waitMs: 5000 });
    expect(lock.name).toBe(name);
    await lock.release();
  }
}

describe('the name rule', () => {
  it('the README states the rule the code declares', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8').replace(/\s+/g, ' ');
    expect(readme).toContain(nameRuleText());
    for (const { from } of NAME_REFUSED) {
      expect(nameRuleText()).toContain(`U+${from.toString(16).toUpperCase().padStart(4, '0')}`);
    }
  });

  const redis = redisForSuite();
  it('Redis: refused before anything is sent', async () => {
    const prefix = uniqueName('names');
    await redis.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url: redis.server.url, prefix });
    try {
      await ruleHolds(locks, async () =>
        expect(await redis.admin.keys(`{${prefix}}:*`)).toEqual([`{${prefix}}:epoch`]),
      );
    } finally {
      await locks.close();
    }
  });

  const etcd = serverForSuite(startEtcd, { stop: (cluster) => cluster.stop() });
  it('etcd: refused before anything is sent', async () => {
    const prefix = `/${uniqueName('names')}/`;
    const locks = await etcdLocks({ endpoints: etcd.server.endpoints, prefix });
    const admin = new Etcd3({ hosts: etcd.server.endpoints });
    try {
      await ruleHolds(locks, async () => expect(await admin.getAll().prefix(prefix).keys()).toEqual([]));
    } finally {
      admin.close();
      await locks.close();
    }
  });

  describe.skipIf(!hasZookeeper())('on ZooKeeper', () => {
    const zk = serverForSuite(startZookeeper);
    it('ZooKeeper: refused before a session is opened, where it answered REFUSED after 5 transactions', async () => {
      const prefix = `/${uniqueName('names')}`;
      let sessions = 0;
      const openSession = (...args: Parameters<typeof ZkSession.open>) => {
        sessions++;
        return ZkSession.open(...args);
      };
      const locks = await zookeeperLocks({ connect: zk.server.connect, prefix, openSession } as object);
      try {
        const opened = sessions; // the factory's own check that ZooKeeper is there
        await ruleHolds(locks, async () => expect(sessions).toBe(opened));
      } finally {
        await locks.close();
      }
    });
  });
});
