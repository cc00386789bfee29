// The typed, promise-based layer over node-zookeeper-client, against a real ZooKeeper: what it
// refuses before dialling, what it reports when the server is absent or the session ends, and
// the operations the store is built on.
import { InvalidArgumentError } from '@ids/engine';
import {
  fourLetters,
  freePort,
  hasZookeeper,
  serverForSuite,
  startZookeeper,
  TcpProxy,
} from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  LeaseLostError,
  LeaseStoreRefusedError,
  StoreUnavailableError,
  ZookeeperChrootError,
} from '../src/index.js';
import { parseConnectString, ZkAnswer, ZkSession } from '../src/internal.js';
import {
  claim,
  cleanupAfterEach,
  FAST_LEASE,
  failure,
  freshPath,
  layoutWith,
  until,
  WAIT_MS,
  zookeeperForSuite,
} from './helpers.js';

const open = (connect: string, sessionTimeoutMs = 30_000) =>
  ZkSession.open(connect, { sessionTimeoutMs, timeoutMs: 10_000, feature: 'machine-id' });
const cleanup = cleanupAfterEach();

describe('connect strings', () => {
  it.each([
    ['localhost', /the port must be 1 to 65535/],
    ['127.0.0.1:0', /the port must be 1 to 65535/],
    ['127.0.0.1:65536', /the port must be 1 to 65535/],
    ['127.0.0.1:21x81', /the port must be 1 to 65535/],
    ['127.0.0.1:2181,', /has no valid host/],
    [':2181', /has no valid host/],
    ['127.0.0.1:2181/', /the chroot must be/],
    ['127.0.0.1:2181/a//b', /the chroot must be/],
    ['', /expected host:port/],
    ['[::1]', /the port must be 1 to 65535/],
    ['::1:2181', /has no valid host/],
    ['[::g]:2181', /has no valid host/],
    ['[127.0.0.1]:2181', /has no valid host/],
  ])('%j is InvalidArgumentError before anything is dialled', async (connect, message) => {
    const error = await failure(open(connect));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).option).toBe('connect');
    expect(error.message).toMatch(message);
  });

  // Issue 33 item 4: the library splits each server on every colon, so `[::1]:2181` was dialled
  // as host `[`; the servers are read here, once, and dialled as read.
  it('a bracketed IPv6 server is dialled as its address, alone or in a list, with or without a chroot', () => {
    expect(parseConnectString('[::1]:2181').endpoints).toEqual([{ host: '::1', port: 2181 }]);
    const list = parseConnectString('[::1]:2181,127.0.0.1:2182,[fd00::a:2]:2183,zk-1.local:2184/apps/ids');
    expect(list.endpoints).toEqual([
      { host: '::1', port: 2181 },
      { host: '127.0.0.1', port: 2182 },
      { host: 'fd00::a:2', port: 2183 },
      { host: 'zk-1.local', port: 2184 },
    ]);
    expect(list.servers).toEqual(['[::1]:2181', '127.0.0.1:2182', '[fd00::a:2]:2183', 'zk-1.local:2184']);
    expect(list.chroot).toBe('/apps/ids');
  });

  it('a port nothing listens on is StoreUnavailableError once the connect timeout passes', async () => {
    const port = await freePort();
    const error = await failure(
      ZkSession.open(`127.0.0.1:${port}`, { sessionTimeoutMs: 2000, timeoutMs: 500, feature: 'machine-id' }),
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toContain(`127.0.0.1:${port}`);
  });
});

describe.skipIf(!hasZookeeper())('ZkSession on a real ZooKeeper', () => {
  const suite = zookeeperForSuite();

  it('a chroot that does not exist is ZookeeperChrootError; once created, paths are under it', async () => {
    const chroot = freshPath('chroot');
    const error = await failure(open(`${suite.server.connect}${chroot}`));
    expect(error).toBeInstanceOf(ZookeeperChrootError);
    expect((error as ZookeeperChrootError).chroot).toBe(chroot);
    await suite.admin.mkdirp(chroot);
    const inside = await open(`${suite.server.connect}${chroot}`);
    cleanup.push(() => inside.close());
    await inside.create('/x', 'y');
    expect((await suite.admin.getData(`${chroot}/x`))?.data).toBe('y');
  });

  it('creates persistent, ephemeral and sequential nodes; versions guard setData; a transaction applies all or nothing', async () => {
    const base = freshPath('ops');
    await suite.admin.mkdirp(base);
    const session = await open(suite.server.connect);
    cleanup.push(() => session.close());

    await session.create(`${base}/p`, 'one');
    const first = await session.getData(`${base}/p`);
    expect(first).toMatchObject({ data: 'one', stat: { version: 0, owner: undefined } });
    expect((await session.setData(`${base}/p`, 'two', 0)).version).toBe(1);
    const stale = await failure(session.setData(`${base}/p`, 'three', 0));
    expect(stale).toBeInstanceOf(ZkAnswer);
    expect(stale).toBeInstanceOf(LeaseStoreRefusedError);
    expect((stale as ZkAnswer).answer).toBe('BAD_VERSION');
    expect((await session.getData(`${base}/p`))?.data).toBe('two');

    await session.create(`${base}/e`, '', 'ephemeral');
    expect((await suite.admin.exists(`${base}/e`))?.owner).toBe(session.id);
    const seq = await Promise.all(
      [1, 2, 3].map(() => session.create(`${base}/s-`, '', 'persistent-sequential')),
    );
    expect(seq.map((p) => p.slice(-10)).sort()).toEqual(['0000000002', '0000000003', '0000000004']);
    expect((await session.getChildren(base))?.sort()).toEqual([
      'e',
      'p',
      's-0000000002',
      's-0000000003',
      's-0000000004',
    ]);
    expect(await session.getChildren(`${base}/none`)).toBeUndefined();
    expect(await session.exists(`${base}/none`)).toBeUndefined();
    expect((await failure(session.create(`${base}/p`, ''))) as ZkAnswer).toMatchObject({
      answer: 'NODE_EXISTS',
    });

    const bad = await failure(
      session.multi([
        { op: 'set', path: `${base}/p`, data: 'four', version: 1 },
        { op: 'check', path: `${base}/e`, version: 7 },
      ]),
    );
    expect((bad as ZkAnswer).answer).toBe('BAD_VERSION');
    expect((await session.getData(`${base}/p`))?.data).toBe('two');

    await session.close();
    expect(await suite.admin.exists(`${base}/e`)).toBeUndefined();
    const closed = await failure(session.exists(base));
    expect(closed).toBeInstanceOf(LeaseLostError);
  });

  it('a watch, once armed, is a promise of the next event: a change, a deletion, a creation, the end of the session', async () => {
    const base = freshPath('watch');
    await suite.admin.mkdirp(`${base}/n`);
    const session = await open(suite.server.connect);
    cleanup.push(() => session.close());
    const changed = await session.watch(`${base}/n`);
    expect(changed.stat?.version).toBe(0);
    await suite.admin.setData(`${base}/n`, 'x', -1);
    expect(await changed.next).toBe('changed');
    const deleted = await session.watch(`${base}/n`);
    await suite.admin.remove(`${base}/n`, -1);
    expect(await deleted.next).toBe('deleted');
    const created = await session.watch(`${base}/n`);
    expect(created.stat).toBeUndefined();
    await suite.admin.create(`${base}/n`, '');
    expect(await created.next).toBe('created');
    const ended = await session.watch(`${base}/n`);
    await session.close();
    expect(await ended.next).toBe('session-ended');
  });

  it('a connect given up while its answer is still on the way leaves nothing behind to crash the process later', async () => {
    const proxy = await TcpProxy.start(suite.server.connect);
    cleanup.push(() => proxy.close());
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    cleanup.push(async () => void process.off('uncaughtException', record));
    // The connect request waits in the proxy: no session comes within the timeout.
    proxy.setMode('blackhole');
    const port = new URL(proxy.url).port;
    const error = await failure(
      ZkSession.open(`127.0.0.1:${port}`, { sessionTimeoutMs: 5000, timeoutMs: 300, feature: 'machine-id' }),
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    // Now the request goes through and the server answers it (a session is granted, then
    // expires unused). The library, closed the ordinary way, would read that answer as a reply
    // and throw from its socket handler.
    const answered = new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (proxy.connections === 0 || uncaught.length > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });
    proxy.setMode('pass');
    await answered;
    const session = await open(suite.server.connect);
    cleanup.push(() => session.close());
    await session.exists('/');
    expect(uncaught).toEqual([]);
  });

  it('a session that expires while a create is on the wire: the create fails typed, is not applied, and the session reports its end', async () => {
    const base = freshPath('expire');
    await suite.admin.mkdirp(base);
    const proxy = await TcpProxy.start(suite.server.connect);
    cleanup.push(() => proxy.close());
    const port = new URL(proxy.url).port;
    const session = await ZkSession.open(`127.0.0.1:${port}`, {
      sessionTimeoutMs: 1000,
      timeoutMs: 1500,
      feature: 'machine-id',
    });
    cleanup.push(() => session.close());
    const ended = new Promise<string>((resolve) => session.onEnd(resolve));
    await session.create(`${base}/mine`, '', 'ephemeral');

    proxy.setMode('blackhole');
    const creating = failure(session.create(`${base}/late`, '', 'ephemeral'));
    // The server expires the session: its ephemeral node goes.
    await until(
      async () => (await suite.admin.exists(`${base}/mine`)) === undefined,
      WAIT_MS,
      'the session to expire',
    );
    expect(await creating).toBeInstanceOf(StoreUnavailableError);
    // The client reconnects and is told the session is gone.
    proxy.setMode('reset');
    proxy.setMode('pass');
    expect(await ended).toBe('expired');
    const after = await failure(session.create(`${base}/later`, '', 'ephemeral'));
    expect(after).toBeInstanceOf(LeaseLostError);
    expect((after as LeaseLostError).kind).toBe('lease-expired');
    expect(await suite.admin.getChildren(base)).toEqual([]);
  });
});

// Issue 33 item 4: `[::1]:<port>` passed validation and then failed with "nothing listening",
// although ZooKeeper answered there. This server listens on ::1 only (clientPortAddress), so
// only a client that dials the IPv6 address reaches it.
describe.skipIf(!hasZookeeper())('a ZooKeeper listening on ::1 only', () => {
  // Never ZOOKEEPER_CONNECT's server: this one must listen on ::1.
  const suite = serverForSuite(() => startZookeeper({ host: '::1', allowExternal: false }));

  it('a session, a claim and its release through [::1]:<port>, and through a list whose other server is down', async () => {
    expect(suite.server.connect).toMatch(/^\[::1\]:\d+$/);
    expect(await fourLetters(suite.server.port, 'ruok', 1000, '::1')).toBe('imok');
    expect(await fourLetters(suite.server.port, 'ruok', 1000, '127.0.0.1')).toBe('');
    const session = await open(suite.server.connect);
    cleanup.push(() => session.close());
    const path = freshPath('ipv6');
    await session.mkdirp(path);
    await session.create(`${path}/n`, 'v6');
    expect((await session.getData(`${path}/n`))?.data).toBe('v6');

    // The client shuffles the list: whichever it dials first, the closed port is refused and
    // passed over for the server.
    const closed = await freePort();
    const held = await claim(layoutWith(4), {
      connect: `[::1]:${closed},${suite.server.connect}`,
      path,
      ...FAST_LEASE,
    });
    expect((await session.exists(`${path}/claims/${held.machineId}`))?.owner).toBe(held.leaseId);
    await held.release();
    expect(await session.exists(`${path}/claims/${held.machineId}`)).toBeUndefined();
  });
});
