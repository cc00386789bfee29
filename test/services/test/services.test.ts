import { connect, createServer, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import {
  accepts,
  hasEtcd,
  hasMariadb,
  hasPostgres,
  hasRedis,
  startEtcd,
  startMariadb,
  startPostgres,
  startRedis,
  TcpProxy,
} from '../src/index.js';
import { freePort, onFreePort } from '../src/process.js';

/** One RESP command over a raw socket: the harness is tested without any client library. */
function redisCommand(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => socket.write(`${line}\r\n`));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString());
    });
    socket.once('error', reject);
  });
}

/** AUTH then GET on one connection; resolves with GET's reply once both replies are in. */
function authedGet(port: number, key: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let buffer = '';
    socket.once('connect', () => socket.write(`AUTH s3cret\r\nGET ${key}\r\n`));
    socket.on('data', (data) => {
      buffer += data.toString();
      if (buffer.startsWith('+OK\r\n') && buffer.length > 5) {
        socket.destroy();
        resolve(buffer.slice(5));
      }
    });
    socket.once('error', reject);
  });
}

describe.skipIf(!hasRedis())('startRedis', () => {
  it('starts a server without persistence: a restart forgets every key; kill, pause and resume act on it', async () => {
    const redis = await startRedis({ allowExternal: false, password: 's3cret' });
    afterAll(() => redis.close());
    expect(await redisCommand(redis.port, 'PING')).toMatch(/^-NOAUTH/);
    expect(redis.url).toBe(`redis://:s3cret@127.0.0.1:${redis.port}`);
    const authed = (command: string) => redisCommand(redis.port, `AUTH s3cret\r\n${command}`);
    expect(await authed('SET ids:probe 1')).toMatch(/^\+OK\r\n/);
    await redis.kill();
    expect(redis.running).toBe(false);
    expect(await accepts(redis.port)).toBe(false);
    await redis.start();
    expect(redis.running).toBe(true);
    // AUTH's +OK and GET's nil bulk string arrive together or apart; wait for both.
    const reply = await authedGet(redis.port, 'ids:probe');
    expect(reply).toBe('$-1\r\n');
    redis.pause();
    const frozen = await Promise.race([
      redisCommand(redis.port, 'PING'),
      new Promise((resolve) => setTimeout(() => resolve('no answer'), 300)),
    ]);
    expect(frozen).toBe('no answer');
    redis.resume();
    await redis.close();
    expect(await accepts(redis.port)).toBe(false);
  });
});

describe.skipIf(!hasPostgres())('startPostgres', () => {
  it('starts a cluster that accepts connections, and stops and restarts it on the same port', async () => {
    const pg = await startPostgres({ allowExternal: false });
    afterAll(() => pg.close());
    expect(pg.url).toBe(`postgres://postgres@127.0.0.1:${pg.port}/postgres`);
    expect(await accepts(pg.port)).toBe(true);
    await pg.kill();
    expect(await accepts(pg.port)).toBe(false);
    await pg.start();
    expect(await accepts(pg.port)).toBe(true);
    await pg.close();
    expect(await accepts(pg.port)).toBe(false);
  });
});

/** The first packet a MySQL-protocol server sends: the handshake, whose 5th byte is protocol 10. */
function mysqlGreeting(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data);
    });
    socket.once('error', reject);
  });
}

describe.skipIf(!hasMariadb())('startMariadb', () => {
  it('starts a server that greets, and kills and restarts it on the same port', async () => {
    const db = await startMariadb({ allowExternal: false });
    afterAll(() => db.close());
    expect(db.url).toBe(`mysql://root@127.0.0.1:${db.port}/ids`);
    const greeting = await mysqlGreeting(db.port);
    expect(greeting[4]).toBe(10);
    expect(greeting.toString('latin1')).toMatch(/MariaDB/);
    await db.kill();
    expect(db.running).toBe(false);
    expect(await accepts(db.port)).toBe(false);
    await db.start();
    expect((await mysqlGreeting(db.port))[4]).toBe(10);
    await db.close();
    expect(await accepts(db.port)).toBe(false);
  });
});

describe('startEtcd', () => {
  it('without the binary: hasEtcd says so, and a start fails naming it and how to install it', async () => {
    const binary = '/nonexistent/etcd';
    expect(hasEtcd(binary)).toBe(false);
    await expect(startEtcd({ binary })).rejects.toThrow(
      `cannot run etcd (${binary}): install it (Debian/Ubuntu: apt-get install etcd-server; or run scripts/ensure-services.mjs) or set ETCD_BIN`,
    );
  });
});

describe('onFreePort', () => {
  it('starts again on another port when the one found free was taken before the bind; other failures are thrown', async () => {
    const picks = [5001, 5002, 5003, 5004];
    const pick = async () => picks.shift()!;
    const tried: number[] = [];
    const port = await onFreePort(async (p) => {
      tried.push(p);
      if (p < 5003) throw new Error(`redis-server exited during start-up: bind: Address already in use`);
    }, pick);
    expect(port).toBe(5003);
    expect(tried).toEqual([5001, 5002, 5003]);

    const other = onFreePort(async () => {
      throw new Error('redis-server exited during start-up: bad config');
    }, pick);
    await expect(other).rejects.toThrow('bad config');

    let calls = 0;
    const always = onFreePort(
      async () => {
        calls++;
        throw new Error('Address already in use');
      },
      async () => 6000,
    );
    await expect(always).rejects.toThrow('Address already in use');
    expect(calls).toBe(3);
  });
});

/** Connects through `proxy`, sends `line`, and resolves with all it received once the connection ends. */
function exchange(proxy: TcpProxy, line: string): Promise<string> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: '127.0.0.1', port: Number(new URL(proxy.url).port) });
    let received = '';
    socket.once('connect', () => socket.write(line));
    socket.on('data', (data) => {
      received += data.toString();
    });
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(received));
  });
}

/** Polls `done` every 5 ms; fails after 10 s. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const end = performance.now() + 10_000; !done(); ) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('TcpProxy', () => {
  it('drops a client whose target refuses; with retryRefusedMs it dials again and delivers what the client sent once the target listens', async () => {
    const port = await freePort();
    const plain = await TcpProxy.start(`127.0.0.1:${port}`);
    const patient = await TcpProxy.start(`127.0.0.1:${port}`, { retryRefusedMs: 10_000 });
    const echo = createServer((socket) => socket.once('data', (data) => socket.end(`echo ${data}`)));
    try {
      expect(await exchange(plain, 'hello')).toBe('');
      expect(plain.refusals).toBe(1);

      const answer = exchange(patient, 'hello');
      // Refused twice at least: the bytes it holds were sent before the target listened.
      await until(() => patient.refusals >= 2, 'two refused dials');
      await new Promise<void>((resolve) => echo.listen(port, '127.0.0.1', resolve));
      expect(await answer).toBe('echo hello');
    } finally {
      await Promise.all([plain.close(), patient.close()]);
      await new Promise((resolve) => echo.close(resolve));
    }
  });

  it('with retryRefusedMs, gives the client up once the time is spent, or at once when cut meanwhile', async () => {
    const port = await freePort();
    const brief = await TcpProxy.start(`127.0.0.1:${port}`, { retryRefusedMs: 100 });
    const patient = await TcpProxy.start(`127.0.0.1:${port}`, { retryRefusedMs: 60_000 });
    try {
      expect(await exchange(brief, 'hello')).toBe('');
      expect(brief.refusals).toBeGreaterThanOrEqual(2);

      const answer = exchange(patient, 'hello');
      await until(() => patient.refusals >= 1, 'a refused dial');
      patient.setMode('reset');
      expect(await answer).toBe('');
      expect(patient.connections).toBe(0);
    } finally {
      await Promise.all([brief.close(), patient.close()]);
    }
  });
});
