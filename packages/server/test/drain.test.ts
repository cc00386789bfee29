// The drain before a shutdown: readiness 503 at once, requests still served for drainMs, then no
// new connections, requests in flight finished, claims released. Its timing rules run on a
// FakeClock that moves only when the test moves it; the SIGTERM path runs on the real bin, under
// load, with a client that follows readiness as a load balancer does.
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { FakeClock } from '@ids/engine';
import { gate } from '@ids/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkServerOptions,
  MAX_DRAIN_MS,
  type RunningIdServer,
  ServerConfigError,
  type ServerEvent,
  startIdServer,
} from '../src/index.js';
import { call, runBin, scratch, startBin } from './helpers.js';

const running: RunningIdServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.shutdown({ drain: false })));
});

/** Waits until `done()` holds, looking every few ms (no time limit: the test's own bounds it). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** A server on a FakeClock that moves only when told, with a route that answers when `release()` is called. */
async function drainingServer(drainMs: number) {
  const clock = new FakeClock(Date.now(), { autoAdvance: false });
  const events: ServerEvent['kind'][] = [];
  const gated = { entered: false };
  const answer = gate();
  const server = await startIdServer({
    port: 0,
    machineIdSource: 'explicit',
    machineIds: [5],
    clock,
    drainMs,
    onError: () => undefined,
    onEvent: (event) => events.push(event.kind),
    plugins: [
      {
        name: 'gate',
        routes: [
          {
            method: 'GET',
            path: '/gate',
            operationId: 'gate',
            summary: 'Answers once the test releases it.',
            responses: { '200': { description: 'Released.' } },
            async handle() {
              gated.entered = true;
              await answer.opened;
              return { json: { released: true } };
            },
          },
        ],
      },
    ],
  });
  running.push(server);
  return { server, clock, events, release: answer.open, gated };
}

describe('the drain, on an injected clock', () => {
  it('readiness 503 at once; requests (on new connections too) served until drainMs; then no new connections, the one in flight finishes', async () => {
    const { server, clock, events, release, gated } = await drainingServer(5000);
    let settled = false;
    const stopping = server.shutdown().then((result) => {
      settled = true;
      return result;
    });
    expect(server.ready).toBe(false);
    const ready = await call(server.url, 'GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.json.shuttingDown).toBe(true);
    expect(events).toEqual(['draining']);

    // Still serving, each answer closing its connection so that clients reconnect elsewhere.
    const during = await call(server.url, 'GET', '/id');
    expect(during.status).toBe(200);
    expect(during.headers.connection).toBe('close');
    clock.advance(4999);
    expect((await call(server.url, 'GET', '/id')).status).toBe(200);
    const inFlight = call(server.url, 'GET', '/gate');
    await until(() => gated.entered);
    expect(settled).toBe(false);
    expect(events).toEqual(['draining']);

    clock.advance(1);
    await until(() => events.includes('closing'));
    await expect(call(server.url, 'GET', '/id')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(settled).toBe(false); // the /gate request is still in flight
    release();
    expect((await inFlight).json).toEqual({ released: true });
    expect(await stopping).toEqual({ clean: true });
    expect(events).toEqual(['draining', 'closing']);
    expect(server.pool.slots[0]?.state).toBe('closed');
  });

  it('shutdown({ drain: false }) ends a drain under way, without the clock moving', async () => {
    const { server, clock, events } = await drainingServer(60_000);
    const first = server.shutdown();
    expect((await call(server.url, 'GET', '/id')).status).toBe(200);
    const second = server.shutdown({ drain: false });
    expect(second).toBe(first);
    expect(await second).toEqual({ clean: true });
    expect(events).toEqual(['draining', 'closing']);
    expect(clock.sleeps).toContain(60_000);
    await expect(call(server.url, 'GET', '/id')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('drainMs 0 (the default of startIdServer) closes at once; shutdown({ drain: false }) skips a configured drain', async () => {
    for (const [drainMs, drain] of [
      [0, true],
      [5000, false],
    ] as const) {
      const { server, events } = await drainingServer(drainMs);
      expect(await server.shutdown({ drain })).toEqual({ clean: true });
      expect(events).toEqual(['closing']);
    }
  });

  it.each([-1, 1.5, MAX_DRAIN_MS + 1, Number.NaN])('drainMs %s is a ServerConfigError', (drainMs) => {
    expect(() => checkServerOptions({ drainMs })).toThrow(ServerConfigError);
    expect(() => checkServerOptions({ drainMs })).toThrow(/drainMs: expected an integer from 0 to 600000/);
  });
});

describe('SIGTERM on the real bin, under load', () => {
  it('a client that follows readiness sees no failed request; in-flight work finishes, the claim is released, exit 0', async () => {
    const dir = scratch();
    // 2 s is the follower's window to see the 503: one readiness poll, sent right after the last.
    const run = await startBin({ IDS_CLAIM_DIR: dir, IDS_DRAIN_MS: '2000' });
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    let stopped = false;
    let served = 0;
    const failures: string[] = [];
    const ids = new Set<string>();
    const worker = async () => {
      while (!stopped) {
        try {
          const reply = await call(run.url, 'GET', '/id', { agent });
          if (reply.status === 200) {
            served += 1;
            ids.add(reply.json.id);
          } else failures.push(`${reply.status} ${reply.text}`);
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    // The follower: polls readiness back to back, and stops the workers at the first 503, as a
    // load balancer removes an endpoint. Then, as one that has not caught up yet, sends one more.
    let straggler: Awaited<ReturnType<typeof call>> | undefined;
    const follower = async () => {
      for (;;) {
        try {
          const reply = await call(run.url, 'GET', '/health/ready');
          if (reply.status === 503) break;
        } catch (error) {
          failures.push(`readiness: ${String(error)}`);
          break;
        }
      }
      stopped = true;
      straggler = await call(run.url, 'GET', '/id').catch((error: unknown) => {
        failures.push(`straggler: ${String(error)}`);
        return undefined;
      });
    };
    const workers = Array.from({ length: 32 }, worker);
    const following = follower();
    await until(() => served >= 2000 || failures.length > 0);
    const code = run.stop('SIGTERM');
    await Promise.all([...workers, following]);
    agent.destroy();
    expect(failures).toEqual([]);
    expect(straggler?.status).toBe(200);
    expect(straggler?.headers.connection).toBe('close');
    expect(ids.size).toBe(served);
    expect(await code).toBe(0);
    expect(run.out()).toMatch(
      /SIGTERM: shutting down\ndraining for 2000 ms: readiness answers 503, requests are still served\nclosing: no new connections; requests in flight finish\nstopped\n$/,
    );
    expect(JSON.parse(readFileSync(join(dir, '0.claim'), 'utf8')).state).toBe('released');
  });

  it('--drain takes whole milliseconds: anything else is exit 2 naming the flag', async () => {
    const flag = await runBin({ PORT: '0', IDS_MACHINE_ID: '1' }, ['--drain', '5s']);
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/--drain: expected a whole number, received "5s"/);
    const env = await runBin({ PORT: '0', IDS_MACHINE_ID: '1', IDS_DRAIN_MS: '700000' });
    expect(env.code).toBe(2);
    expect(env.err).toMatch(/drainMs: expected an integer from 0 to 600000, received 700000/);
  });
});
