// One machine-ID chain for every entry point. In one IDS_* environment that names a store (etcd,
// Redis or ZooKeeper, each a real server on a free loopback port), `ids-server`,
// `Sonyflake.create({ machineId: 'auto' })` and `ids generate` each take their machine ID through
// one claim in that store: held at once they hold distinct IDs, every one of them a claim the
// store shows, and each is released when its holder ends. Before the chain was one, only the
// CLI claimed in Redis or ZooKeeper, none claimed in etcd, and the server and the library took
// host claims beside them: claim domains that could not see each other.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { ZkSession } from '@ids/machine-zookeeper/internal';
import { hasEtcd, hasRedis, hasZookeeper, startEtcd, startRedis, startZookeeper } from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, tempDir } from './helpers.js';
import { applicationResolution } from './lib/application-resolution.js';
import { listening, printed } from './lib/listening.js';
import { describeRun, root, run } from './lib/workspace.js';

/** A store server started for the tests, as the chain's environment names it. */
interface StoreUnderTest {
  /** The variables that say where it is. */
  readonly env: Record<string, string>;
  /** The machine IDs claimed there now, in increasing order. */
  claims(): Promise<number[]>;
  stop(): Promise<void>;
}

/** The machine IDs of the claim keys under a prefix of keys `<prefix><id>`, in increasing order. */
const idsOf = (keys: readonly string[], prefix: string) =>
  keys
    .filter((key) => key.startsWith(prefix) && /^\d+$/.test(key.slice(prefix.length)))
    .map((key) => Number(key.slice(prefix.length)))
    .sort((a, b) => a - b);

const STORES: readonly {
  readonly name: string;
  readonly label: string;
  readonly has: () => boolean;
  readonly start: () => Promise<StoreUnderTest>;
}[] = [
  {
    name: 'etcd',
    label: 'etcd',
    has: hasEtcd,
    async start() {
      const cluster = await startEtcd();
      const client = new Etcd3({ hosts: cluster.endpoints });
      return {
        env: { IDS_ETCD_ENDPOINTS: cluster.endpoints.join(',') },
        claims: async () =>
          idsOf(await client.getAll().prefix('/ids/machine-id/').keys(), '/ids/machine-id/'),
        async stop() {
          client.close();
          await cluster.stop();
        },
      };
    },
  },
  {
    name: 'redis',
    label: 'Redis',
    has: hasRedis,
    async start() {
      const server = await startRedis({ allowExternal: false });
      const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      return {
        env: { IDS_REDIS_URL: server.url },
        claims: async () => idsOf(await client.keys('{ids:machine-id}:*'), '{ids:machine-id}:'),
        async stop() {
          client.disconnect();
          await server.close();
        },
      };
    },
  },
  {
    name: 'zookeeper',
    label: 'ZooKeeper',
    has: hasZookeeper,
    async start() {
      const server = await startZookeeper({ allowExternal: false });
      const admin = await ZkSession.open(server.connect, {
        sessionTimeoutMs: 10_000,
        timeoutMs: 10_000,
        feature: 'machine-id',
      });
      return {
        env: { IDS_ZOOKEEPER_CONNECT: server.connect },
        async claims() {
          const children = (await admin.getChildren('/ids/machine-id/claims')) ?? [];
          return children.map(Number).sort((a, b) => a - b);
        },
        async stop() {
          await admin.close();
          await server.close();
        },
      };
    },
  },
];

// The user's environment without IDS_* settings and Kubernetes: only what each test sets.
const userEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !name.startsWith('IDS_') && name !== 'KUBERNETES_SERVICE_HOST',
  ),
);

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('close', (code) => resolve(code));
  });

for (const store of STORES) {
  describe.skipIf(!store.has())(`one IDS_* environment naming ${store.label}`, () => {
    let server: StoreUnderTest;
    beforeAll(async () => {
      server = await store.start();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('ids-server, Sonyflake.create and ids generate each hold one claim there, distinct while held, released at the end', async () => {
      const env = { ...userEnv, IDS_CLAIM_DIR: tempDir('chain-claims-'), ...server.env };
      const claimed = new RegExp(`claimed machine ID (\\d+) in ${store.label} at `);
      const children: ChildProcess[] = [];
      try {
        // The server: its one generator's machine ID, claimed in the store.
        const bin = spawn(process.execPath, [join(root, 'packages', 'server', 'dist', 'bin.js')], {
          cwd: root,
          env: { ...env, HOST: '127.0.0.1', PORT: '0', IDS_DRAIN_MS: '0' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        children.push(bin);
        let log = '';
        bin.stdout?.on('data', (chunk: Buffer | string) => {
          log += chunk.toString();
        });
        // The slot's line is written after the listening line, not with it: wait for both.
        const claimLine = printed(bin, claimed);
        const url = await listening(bin);
        const ready = (await (await fetch(`${url}/health/ready`)).json()) as {
          machines: { machineId: number }[];
        };
        const [serverId] = ready.machines.map((m) => m.machineId) as [number];
        expect(Number((await claimLine)[1])).toBe(serverId);
        expect(log).toMatch(claimed);
        expect(await server.claims()).toEqual([serverId]);

        // The library, in a program of its own: a claim in the same store, beside the server's.
        const library = spawn(process.execPath, [...applicationResolution(), fixture('auto-library.mjs')], {
          cwd: root,
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        children.push(library);
        const made = JSON.parse((await printed(library, /^(.*)\n/))[1] as string) as {
          machineId: number;
          id: string;
          warnings: string[];
        };
        expect(made.warnings).not.toContain('IDS_HOST_CLAIM');
        expect(made.machineId).not.toBe(serverId);
        expect(Number(BigInt(made.id) & 0xffffn)).toBe(made.machineId);
        expect(await server.claims()).toEqual([serverId, made.machineId].sort((a, b) => a - b));

        // The CLI: a third claim in the store while the other two are held, released on exit.
        const ids = (...args: string[]) =>
          run(process.execPath, [join(root, 'packages', 'cli', 'bin', 'ids.js'), ...args], {
            cwd: root,
            env,
            timeoutMs: 120_000,
          });
        const generate = await ids('generate', '--json');
        expect(generate.status, describeRun('ids generate', generate)).toBe(0);
        // No host-claim note: the ID was claimed in the store.
        expect(generate.stderr).toBe('');
        const cli = JSON.parse(generate.stdout) as { machineId: number; ids: string[] };
        expect([serverId, made.machineId]).not.toContain(cli.machineId);
        expect(Number(BigInt(cli.ids[0] as string) & 0xffffn)).toBe(cli.machineId);
        const explained = await ids('machine-id', '--json');
        expect(explained.status, describeRun('ids machine-id', explained)).toBe(0);
        const chosen = JSON.parse(explained.stdout) as { step: string; trail: { detail: string }[] };
        expect(chosen.step).toBe(store.name);
        expect(chosen.trail.at(-1)?.detail).toMatch(claimed);
        expect(await server.claims()).toEqual([serverId, made.machineId].sort((a, b) => a - b));

        // Each releases its own claim when it ends.
        library.stdin?.end('close\n');
        expect(await exited(library)).toBe(0);
        expect(await server.claims()).toEqual([serverId]);
        bin.kill('SIGTERM');
        expect(await exited(bin)).toBe(0);
        expect(await server.claims()).toEqual([]);
      } finally {
        for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
      }
    }, 240_000);
  });
}
