// What an uncontended acquire + release costs on the wire (issue 34, item 7): two round trips,
// counted by a proxy that reads every RESP value passing between the locks and a real Redis, on
// all of their connections (commands and the release subscriber). Speed itself is measured by
// test/bench/lock.mjs, not here.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisLocks } from '../src/redis.js';
import { cleanupAfterEach, redisForSuite, uniqueName, until, WAIT_MS } from './helpers.js';

/**
 * Counts whole RESP values (RESP2 and RESP3) in one direction of a stream, however TCP cuts it:
 * a command is one value (an array of bulk strings), and so is each reply or pushed message.
 */
class RespCounter {
  count = 0;
  #buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (let end = this.#end(0); end >= 0; end = this.#end(0)) {
      this.#buffer = this.#buffer.subarray(end);
      this.count++;
    }
  }

  /** Where the value that starts at `at` ends, or -1 while it has not all arrived. */
  #end(at: number): number {
    const eol = this.#buffer.indexOf('\r\n', at);
    if (eol < 0) return -1;
    const type = String.fromCharCode(this.#buffer[at] as number);
    const size = Number(this.#buffer.toString('latin1', at + 1, eol));
    let next = eol + 2;
    if ('$=!'.includes(type)) {
      if (size < 0) return next;
      return this.#buffer.length >= next + size + 2 ? next + size + 2 : -1;
    }
    if ('*~>%|'.includes(type)) {
      // A map or attribute holds a key and a value per entry.
      const items = size * ('%|'.includes(type) ? 2 : 1);
      for (let i = 0; i < items && next >= 0; i++) next = this.#end(next);
      return next;
    }
    // +simple -error :integer _null #boolean ,double (big number: one line each.
    return next;
  }
}

/** A loopback proxy in front of Redis that counts the values each way, over all connections. */
class CountingProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  /** Values the clients sent (commands), and values Redis sent them (replies and pushed messages). */
  readonly sent = { count: 0 };
  readonly received = { count: 0 };
  /** Chunks from Redis that carried `marker`. */
  marked = 0;
  marker = '';

  constructor(target: URL) {
    this.#server = createServer((client) => {
      // A counter per connection and direction: a value may come in several chunks, but all on
      // one connection.
      const up = new RespCounter();
      const down = new RespCounter();
      const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk: Buffer) => {
        const before = up.count;
        up.push(chunk);
        this.sent.count += up.count - before;
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        const before = down.count;
        down.push(chunk);
        this.received.count += down.count - before;
        if (this.marker !== '' && chunk.includes(this.marker)) this.marked++;
        client.write(chunk);
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    return `redis://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

describe('an uncontended acquire + release on Redis', () => {
  const suite = redisForSuite();
  const cleanup = cleanupAfterEach();
  let proxy: CountingProxy;
  let url: string;

  beforeAll(async () => {
    proxy = new CountingProxy(new URL(suite.server.url));
    url = await proxy.listen();
  });
  afterAll(() => proxy.close());

  it('is two round trips: two commands sent, two values back, no message to any subscriber', async () => {
    const prefix = uniqueName('trips');
    // An epoch long past: this Redis forgot nothing (the first lock would otherwise wait a TTL).
    await suite.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url, prefix });
    cleanup.push(() => locks.close());
    // A second process's locks on the same prefix: what a release publishes reaches it too.
    const other = await redisLocks({ url, prefix });
    cleanup.push(() => other.close());

    const perRound: [number, number][] = [];
    // The first round is the cold one: ioredis sends each script whole (EVAL) on first use.
    for (let round = 0; round < 5; round++) {
      const sent = proxy.sent.count;
      const received = proxy.received.count;
      const lock = await locks.acquire('orders:42');
      await lock.release();
      // Whatever a release published reaches each subscriber before a message published after
      // it: wait for this one on both subscribers, then take it off the count.
      proxy.marker = `flush-${round}`;
      proxy.marked = 0;
      await suite.admin.publish(`{${prefix}}:released`, `${proxy.marker}/none`);
      await until(() => proxy.marked === 2, WAIT_MS, 'the flush message on both subscribers');
      perRound.push([proxy.sent.count - sent, proxy.received.count - received - 2]);
    }
    expect(perRound).toEqual(Array.from({ length: 5 }, () => [2, 2]));
  });

  it('after Redis forgets its scripts (a restart, SCRIPT FLUSH) they are sent again, once each', async () => {
    const prefix = uniqueName('noscript');
    await suite.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url, prefix });
    cleanup.push(() => locks.close());
    await suite.admin.script('FLUSH');
    const sent = proxy.sent.count;
    const lock = await locks.acquire('n');
    await lock.release();
    // Each script: EVALSHA answered NOSCRIPT, then EVAL.
    expect(proxy.sent.count - sent).toBe(4);
    const again = proxy.sent.count;
    await (await locks.acquire('n')).release();
    expect(proxy.sent.count - again).toBe(2);
  });

  it('a user whose ACL refuses SCRIPT still opens and locks: the scripts go by EVAL at first use', async () => {
    const prefix = uniqueName('acl');
    await suite.admin.set(`{${prefix}}:epoch`, '0');
    await suite.admin.acl('SETUSER', 'noscript', 'on', '>pw', '~*', '&*', '+@all', '-script');
    cleanup.push(async () => void (await suite.admin.acl('DELUSER', 'noscript')));
    await suite.admin.script('FLUSH');
    const locks = await redisLocks({ url: url.replace('redis://', 'redis://noscript:pw@'), prefix });
    cleanup.push(() => locks.close());
    const first = await locks.acquire('n');
    const fence = first.fence;
    await first.release();
    const second = await locks.acquire('n');
    expect(second.fence).toBeGreaterThan(fence);
    await second.release();
  });
});
