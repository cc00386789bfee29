// The ZooKeeper launcher, checked with four-letter commands over a raw socket: the harness is
// tested without any client library.
import { describe, expect, it } from 'vitest';

/** Polls `check` every 50 ms until it holds (the test's own timeout is the ceiling). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

import { fourLetters, hasZookeeper, startZookeeper, startZookeeperEnsemble } from '../src/index.js';

describe.skipIf(!hasZookeeper() || Boolean(process.env.ZOOKEEPER_CONNECT))('ZooKeeper launcher', () => {
  it('a standalone server serves once started, stops, restarts on its port, and is gone after close', async () => {
    const zk = await startZookeeper();
    try {
      expect(zk.connect).toBe(`127.0.0.1:${zk.port}`);
      // Serving at once, not only running: a session opened now is not turned away.
      expect(await zk.mode()).toBe('standalone');
      expect(await fourLetters(zk.port, 'ruok')).toBe('imok');
      zk.pause();
      // SIGSTOP is sent, not yet acted on, when kill() returns: a JVM thread already handling a
      // request may answer it. Ask until it is silent (a server the signal never stops fails).
      let answer = await fourLetters(zk.port, 'ruok', 300);
      for (let tries = 0; answer !== '' && tries < 10; tries++)
        answer = await fourLetters(zk.port, 'ruok', 300);
      expect(answer).toBe('');
      zk.resume();
      expect(await fourLetters(zk.port, 'ruok')).toBe('imok');
      await zk.kill();
      expect(zk.running).toBe(false);
      expect(await fourLetters(zk.port, 'ruok', 300)).toBe('');
      await zk.start();
      expect(await zk.mode()).toBe('standalone');
    } finally {
      await zk.close();
    }
    expect(zk.running).toBe(false);
  });

  it('an ensemble of three elects one leader, keeps serving with one member down, and takes it back', async () => {
    const ensemble = await startZookeeperEnsemble();
    try {
      expect(ensemble.connect.split(',')).toHaveLength(3);
      const modes = await Promise.all(ensemble.members.map((m) => m.mode()));
      expect(modes.filter((m) => m === 'leader')).toHaveLength(1);
      expect(modes.filter((m) => m === 'follower')).toHaveLength(2);
      const leader = await ensemble.leader();
      await leader.stop();
      // The two others elect a leader between them.
      await until(async () => (await ensemble.leader()).myid !== leader.myid);
      await leader.start();
      await ensemble.serving();
      expect(await leader.mode()).toBe('follower');
    } finally {
      await ensemble.close();
    }
    // A hang bound above the launcher's own (90 s to serve, three JVMs, a retry on a member that
    // exits during start-up): 60 s ran out once while other suites loaded the 2-core machine.
  }, 300_000);
});
