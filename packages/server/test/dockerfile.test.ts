// deploy/Dockerfile is read instruction by instruction and checked for what the image promises
// (two stages on Node 24, a non-root user, a health check on readiness at the port the server
// listens on, signals straight to node, sources that exist), its install script is run without a
// container for each choice of stores (the third-party packages from its lockfile, offline), its
// HEALTHCHECK command is run against real servers, and the image is built with buildah (or a
// running Docker engine) where one is on the machine together with the base image: a build never
// pulls, so without the base image stored locally that test is skipped and says why.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startBin } from './helpers.js';

const ROOT = join(__dirname, '..', '..', '..');
const DEPLOY = join(__dirname, '..', 'deploy');
const DOCKERFILE = join(DEPLOY, 'Dockerfile');

interface Instruction {
  keyword: string;
  /** The flags before the arguments (`--from=build`, `--interval=10s`). */
  flags: Map<string, string>;
  /** The rest of the line, continuation lines joined. */
  args: string;
}

/** The instructions of a Dockerfile, grouped by stage (each starts at a FROM). */
function parseDockerfile(text: string): { preamble: Instruction[]; stages: Instruction[][] } {
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    if (whole !== '') logical.push(whole);
  }
  if (pending.trim() !== '') throw new Error(`the Dockerfile ends inside a continued line: ${pending}`);
  const preamble: Instruction[] = [];
  const stages: Instruction[][] = [];
  for (const line of logical) {
    const match = /^([A-Za-z]+)\s+(.*)$/s.exec(line);
    if (!match) throw new Error(`not an instruction: ${line}`);
    let rest = match[2] as string;
    const flags = new Map<string, string>();
    for (let flag = /^--([a-z-]+)=(\S+)\s+/.exec(rest); flag; flag = /^--([a-z-]+)=(\S+)\s+/.exec(rest)) {
      flags.set(flag[1] as string, flag[2] as string);
      rest = rest.slice(flag[0].length);
    }
    const instruction = { keyword: (match[1] as string).toUpperCase(), flags, args: rest.trim() };
    if (instruction.keyword === 'FROM') stages.push([instruction]);
    else (stages.at(-1) ?? preamble).push(instruction);
  }
  return { preamble, stages };
}

/** The JSON array of an exec-form instruction, or undefined for the shell form. */
function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(args);
  return Array.isArray(parsed) && parsed.every((part) => typeof part === 'string') ? parsed : undefined;
}

/** The `KEY=value` pairs of ENV instructions (values without spaces, as this file writes them). */
function envOf(stage: Instruction[]): Map<string, string> {
  const env = new Map<string, string>();
  for (const { keyword, args } of stage.filter((i) => i.keyword === 'ENV')) {
    for (const pair of args.split(/\s+/)) {
      const [key, value] = pair.split(/=(.*)/s) as [string, string | undefined];
      if (value === undefined) throw new Error(`${keyword} ${args}: expected KEY=value pairs`);
      env.set(key, value);
    }
  }
  return env;
}

/**
 * The @ids dependencies of packages/*, and the other packages they take as peers, from their
 * package.json files. Optional peers count: the image is the server with every store it can
 * use, and the stores' packages and clients are optional peers.
 */
function workspaceDependencies(): Map<string, { ids: string[]; clients: string[]; own: string[] }> {
  const graph = new Map<string, { ids: string[]; clients: string[]; own: string[] }>();
  for (const entry of readdirSync(join(ROOT, 'packages'))) {
    const file = join(ROOT, 'packages', entry, 'package.json');
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    const own = Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies });
    const peers = Object.keys(manifest.peerDependencies ?? {});
    graph.set(manifest.name, {
      ids: [...own, ...peers].filter((dep) => dep.startsWith('@ids/')),
      clients: peers.filter((dep) => !dep.startsWith('@ids/')),
      own,
    });
  }
  return graph;
}

const text = readFileSync(DOCKERFILE, 'utf8');
const { preamble, stages } = parseDockerfile(text);
const runtime = stages.at(-1) ?? [];
const only = (stage: Instruction[], keyword: string) => stage.filter((i) => i.keyword === keyword);

describe('deploy/Dockerfile, as written', () => {
  it('has a named build stage and a runtime stage, both on a slim Node 24 base, refusing Node before 22', () => {
    expect(stages.length).toBe(2);
    const nodeVersion = only(preamble, 'ARG')
      .map((i) => /^NODE_VERSION=(\d+)$/.exec(i.args)?.[1])
      .find(Boolean);
    // Node 24 is the active LTS; 20 reached its end of life on 2026-04-30.
    expect(nodeVersion).toBe('24');
    const guard = only(runtime, 'RUN').find((i) => i.args.includes('process.versions.node'));
    expect(guard?.args).toMatch(/major < 22/);
    for (const stage of stages) {
      expect(stage[0]?.args).toMatch(/^node:\$\{NODE_VERSION\}-[a-z]+-slim AS [a-z]+$/);
    }
    const buildName = /AS (\w+)$/.exec(stages[0]?.[0]?.args ?? '')?.[1];
    const fromBuild = only(runtime, 'COPY').filter((i) => i.flags.has('from'));
    expect(fromBuild.map((i) => i.flags.get('from'))).toEqual([buildName]);
    // The build stage packs with the project's own script, which writes where it is told.
    expect(only(stages[0] ?? [], 'RUN').map((i) => i.args)).toEqual(['node scripts/pack.mjs /packed']);
  });

  it('copies only files that exist in the repository, and keeps what the build makes out of the context', () => {
    const sources = stages
      .flat()
      .filter((i) => (i.keyword === 'COPY' || i.keyword === 'ADD') && !i.flags.has('from'))
      .flatMap((i) => (execForm(i.args) ?? i.args.split(/\s+/)).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(existsSync(join(ROOT, source)), source).toBe(true);
    for (const script of text.matchAll(/\b(scripts\/[\w.-]+)/g)) {
      expect(existsSync(join(ROOT, script[1] as string)), script[1]).toBe(true);
    }
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['.git', '**/node_modules', '**/dist', 'packed']));
    // Nothing the build stage needs is ignored (the patterns name no source of the workspace).
    const needed = ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'scripts', 'packages', '.npmrc'];
    expect(ignored.filter((pattern) => needed.includes(pattern.replace(/^\*\*\//, '')))).toEqual([]);
  });

  it('installs from the lockfile: package.json and package-lock.json copied, npm ci, no registry named', () => {
    const copied = only(runtime, 'COPY')
      .filter((i) => !i.flags.has('from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(copied).toEqual(
      expect.arrayContaining([
        'packages/server/deploy/runtime/package.json',
        'packages/server/deploy/runtime/package-lock.json',
      ]),
    );
    const install = only(runtime, 'RUN').find((i) => i.args.includes('install-runtime.sh'));
    expect(install?.args).toMatch(/install-runtime\.sh \/tmp\/packed \/app "\$STORES"/);
    expect(only(runtime, 'ARG').map((i) => i.args)).toContain('STORES=""');
    const script = readFileSync(join(DEPLOY, 'install-runtime.sh'), 'utf8');
    expect(script).toMatch(/^npm ci \$flags$/m);
    expect(script).toMatch(/^npm install --no-save --offline /m);
    const manifest = JSON.parse(readFileSync(join(DEPLOY, 'runtime', 'package.json'), 'utf8'));
    const lock = JSON.parse(readFileSync(join(DEPLOY, 'runtime', 'package-lock.json'), 'utf8'));
    // In step with package.json, so npm ci accepts it; every version pinned.
    expect(lock.packages[''].dependencies).toEqual(manifest.dependencies);
    expect(lock.packages[''].optionalDependencies).toEqual(manifest.optionalDependencies);
    for (const version of Object.values({ ...manifest.dependencies, ...manifest.optionalDependencies }))
      expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    // Written with omit-lockfile-registry-resolved: npm fetches from whatever registry it is set to.
    expect(JSON.stringify(lock)).not.toMatch(/"resolved"/);
  });

  it('runs as a non-root user, listens on every interface on 8080, and hands SIGTERM to node', () => {
    const users = only(runtime, 'USER').map((i) => i.args);
    expect(users.length).toBe(1);
    expect(users[0]).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
    const env = envOf(runtime);
    expect(env.get('HOST')).toBe('0.0.0.0');
    expect(env.get('PORT')).toBe('8080');
    expect(env.get('PATH')).toMatch(/^\/app\/node_modules\/\.bin:/);
    expect(only(runtime, 'EXPOSE').map((i) => i.args)).toEqual(['8080']);
    // Exec form: no shell as PID 1 that would keep SIGTERM from node and so skip the drain.
    const entrypoint = only(runtime, 'ENTRYPOINT');
    expect(entrypoint.length).toBe(1);
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    expect(execForm(entrypoint[0]?.args ?? '')).toEqual(Object.keys(manifest.bin));
    for (const cmd of only(runtime, 'CMD')) expect(execForm(cmd.args)).toBeDefined();
    expect(only(runtime, 'STOPSIGNAL').every((i) => i.args === 'SIGTERM')).toBe(true);
    // The bin's #! line execs node, so node (not env) is the process the signal reaches.
    for (const file of Object.values(manifest.bin) as string[]) {
      expect(readFileSync(join(__dirname, '..', file), 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    }
  });

  it('has a HEALTHCHECK in exec form, run by node: healthcheck.mjs, copied into /app', () => {
    const checks = only(runtime, 'HEALTHCHECK');
    expect(checks.length).toBe(1);
    const argv = execForm((checks[0]?.args ?? '').replace(/^CMD\s+/, ''));
    expect(argv).toEqual(['node', '/app/healthcheck.mjs']);
    expect(readFileSync(join(DEPLOY, 'healthcheck.mjs'), 'utf8')).toContain('/health/ready');
  });
});

describe('its HEALTHCHECK command against real servers', () => {
  const script = join(DEPLOY, 'healthcheck.mjs');
  /** Runs the check as the container would, pointed at the server's process instead of PID 1. */
  const check = (pid: number, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [script], {
      env: { PATH: process.env.PATH ?? '', IDS_HEALTHCHECK_PID: String(pid), ...env },
      encoding: 'utf8',
    }).status;

  it('passes while ready, fails once draining and once stopped', async () => {
    const run = await startBin({
      IDS_MACHINE_ID_SOURCE: 'explicit',
      IDS_MACHINE_ID: '7',
      IDS_DRAIN_MS: '600000',
    });
    let stopped = false;
    try {
      const pid = run.child.pid!;
      expect(check(pid)).toBe(0);
      run.child.kill('SIGTERM');
      // The drain answers 503 on readiness at once; wait for that answer, not for a time.
      while ((await call(run.url, 'GET', '/health/ready')).status !== 503) {}
      expect(check(pid)).toBe(1);
      // A second signal ends the drain.
      expect(await run.stop('SIGTERM')).toBe(0);
      stopped = true;
      expect(check(pid)).toBe(1);
    } finally {
      if (!stopped) await run.stop('SIGKILL');
    }
  });

  it('follows the port however it was set: PORT, --port N, --port=N (the flag wins over PORT), 0', async () => {
    const free = async () => {
      const probe = await startBin({ IDS_MACHINE_ID_SOURCE: 'explicit', IDS_MACHINE_ID: '1' });
      const port = probe.port;
      await probe.stop();
      return port;
    };
    for (const how of ['env', 'flag', 'flag=']) {
      const port = await free();
      const args = how === 'flag' ? ['--port', String(port)] : how === 'flag=' ? [`--port=${port}`] : [];
      // PORT says 1 when the flag sets the port: the old check, which read PORT, failed there.
      const env = {
        IDS_MACHINE_ID_SOURCE: 'explicit',
        IDS_MACHINE_ID: '2',
        PORT: how === 'env' ? String(port) : '1',
      };
      const run = await startBin(env, args);
      try {
        expect(run.port, how).toBe(port);
        // The check's own PORT is the image's 8080, as in the container.
        expect(check(run.child.pid!, { PORT: '8080' }), how).toBe(0);
      } finally {
        await run.stop('SIGKILL');
      }
    }
  });
});

/** The @ids packages each package needs to run: its dependencies (not its optional peers). */
function runtimeClosure(names: readonly string[]): string[] {
  const graph = workspaceDependencies();
  const needed = new Set<string>();
  const visit = (name: string) => {
    if (needed.has(name)) return;
    needed.add(name);
    for (const dep of graph.get(name)?.own ?? []) if (dep.startsWith('@ids/')) visit(dep);
  };
  for (const name of names) visit(name);
  return [...needed].sort();
}

/** Runs a command to its end without blocking the event loop. */
function exec(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ status: number | null; out: string }>((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      out += chunk;
    });
    child.on('close', (status) => resolve({ status, out }));
  });
}

describe('install-runtime.sh, the install of the image without a container', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'ids-image-install-'));
  const packed = join(scratch, 'packed');
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  beforeAll(async () => {
    // pnpm pack as scripts/pack.mjs does (npm test has built every package already).
    const pnpm = spawnSync('pnpm', ['--version']).status === 0 ? ['pnpm'] : ['corepack', 'pnpm'];
    for (const entry of readdirSync(join(ROOT, 'packages'))) {
      const dir = join(ROOT, 'packages', entry);
      if (!existsSync(join(dir, 'package.json'))) continue;
      if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).private) continue;
      const packedOne = await exec(pnpm[0]!, [...pnpm.slice(1), 'pack', '--pack-destination', packed], dir);
      if (packedOne.status !== 0) throw new Error(`pnpm pack in ${dir}: ${packedOne.out}`);
    }
  }, 300_000);

  const STORE_PACKAGES: Record<string, string[]> = {
    '': [],
    pglite: ['@ids/segment'],
    'pglite postgres mysql redis etcd zookeeper': [
      '@ids/segment',
      '@ids/machine-redis',
      '@ids/lock',
      '@ids/machine-etcd',
      '@ids/machine-zookeeper',
    ],
  };
  const CLIENTS: Record<string, string[]> = {
    '': [],
    pglite: ['@electric-sql/pglite'],
    'pglite postgres mysql redis etcd zookeeper': [
      '@electric-sql/pglite',
      'etcd3',
      'ioredis',
      'mysql2',
      'node-zookeeper-client',
      'pg',
    ],
  };

  it.each(Object.keys(STORE_PACKAGES))(
    'STORES="%s": the server and exactly those stores, third-party packages from the lock only',
    async (stores) => {
      const app = join(scratch, `app-${stores.replace(/\W+/g, '-') || 'none'}`);
      cpSync(join(DEPLOY, 'runtime'), app, { recursive: true });
      const env = {
        ...process.env,
        // npm's cache may hold the locked versions; what it lacks comes from the registry it is set to.
        npm_config_prefer_offline: 'true',
        npm_config_fetch_retries: '1',
        npm_config_fetch_retry_mintimeout: '1000',
        npm_config_fetch_retry_maxtimeout: '5000',
      };
      const result = await exec('sh', [join(DEPLOY, 'install-runtime.sh'), packed, app, stores], app, env);
      expect(result.status, result.out).toBe(0);
      const modules = join(app, 'node_modules');
      const ids = readdirSync(join(modules, '@ids')).map((name) => `@ids/${name}`);
      expect(ids.sort()).toEqual(runtimeClosure(['@ids/server', ...STORE_PACKAGES[stores]!]));
      const clients = ['@electric-sql/pglite', 'etcd3', 'ioredis', 'mysql2', 'node-zookeeper-client', 'pg'];
      expect(clients.filter((client) => existsSync(join(modules, client)))).toEqual(CLIENTS[stores]);
      // Each installed third-party package at the lock's version.
      const lock = JSON.parse(readFileSync(join(DEPLOY, 'runtime', 'package-lock.json'), 'utf8'));
      for (const [path, entry] of Object.entries<{ version?: string }>(lock.packages)) {
        if (!path || !existsSync(join(app, path, 'package.json'))) continue;
        expect(JSON.parse(readFileSync(join(app, path, 'package.json'), 'utf8')).version, path).toBe(
          entry.version,
        );
      }
      const help = spawnSync(process.execPath, [join(modules, '.bin', 'ids-server'), '--help'], {
        encoding: 'utf8',
      });
      expect(help.status, help.stderr).toBe(0);
      const du = spawnSync('du', ['-sk', modules], { encoding: 'utf8' }).stdout;
      console.log(`STORES="${stores}": node_modules ${(Number(du.split('\t')[0]) / 1024).toFixed(1)} MB`);
    },
    300_000,
  );

  it('refuses a store it does not know, naming the ones it does', async () => {
    const app = join(scratch, 'app-unknown');
    cpSync(join(DEPLOY, 'runtime'), app, { recursive: true });
    const result = await exec('sh', [join(DEPLOY, 'install-runtime.sh'), packed, app, 'mongodb'], app);
    expect(result.status).toBe(2);
    expect(result.out).toContain(
      'STORES: unknown store "mongodb"; expected any of: pglite postgres mysql redis etcd zookeeper',
    );
  });
});

const firstLine = (text: string) => text.trim().split('\n')[0] ?? '';

/**
 * A builder on this machine that can build the image without pulling: buildah (vfs storage and
 * chroot isolation, which need no daemon and no privileges beyond a user namespace), else a
 * Docker engine that answers. Else the reason, as text: there is none, or the base image is not
 * stored locally (a build must not reach out for it).
 */
function findBuilder():
  | {
      build: (tag: string) => ReturnType<typeof spawnSync>;
      inspect: (tag: string) => string;
      remove: (tag: string) => void;
    }
  | string {
  const base = `node:${/^ARG NODE_VERSION=(\d+)$/m.exec(text)?.[1]}-${/node:\$\{NODE_VERSION\}-([a-z]+)-slim/.exec(text)?.[1]}-slim`;
  const opts = { encoding: 'utf8' as const, maxBuffer: 64 * 1024 * 1024 };
  const buildah = ['--storage-driver', 'vfs'];
  if (spawnSync('buildah', ['--version'], opts).status === 0) {
    const has = spawnSync('buildah', [...buildah, 'inspect', '--type', 'image', base], opts);
    if (has.status !== 0)
      return `buildah is here, but not the base image ${base}, which a build here does not pull: ${firstLine(has.stderr)}`;
    return {
      build: (tag) =>
        spawnSync(
          'buildah',
          [
            ...buildah,
            'build',
            '--pull=never',
            '--isolation',
            'chroot',
            '--format',
            'docker',
            '-f',
            DOCKERFILE,
            '-t',
            tag,
            ROOT,
          ],
          opts,
        ),
      inspect: (tag) => spawnSync('buildah', [...buildah, 'inspect', '--type', 'image', tag], opts).stdout,
      remove: (tag) => void spawnSync('buildah', [...buildah, 'rmi', tag], opts),
    };
  }
  if (spawnSync('docker', ['info'], opts).status === 0) {
    const has = spawnSync('docker', ['image', 'inspect', base], opts);
    if (has.status !== 0)
      return `a Docker engine is here, but not the base image ${base}, which a build here does not pull: ${firstLine(has.stderr)}`;
    return {
      build: (tag) => spawnSync('docker', ['build', '--pull=false', '-f', DOCKERFILE, '-t', tag, ROOT], opts),
      inspect: (tag) => spawnSync('docker', ['image', 'inspect', tag], opts).stdout,
      remove: (tag) => void spawnSync('docker', ['rmi', tag], opts),
    };
  }
  return 'no image builder here (neither buildah nor a running Docker engine)';
}

const builder = findBuilder();

describe('the image, built', () => {
  if (typeof builder === 'string') {
    it.skip(`skipped: ${builder}`, () => {});
    return;
  }
  it('builds, and its configuration is the one the Dockerfile states', { timeout: 20 * 60_000 }, () => {
    const tag = `localhost/ids-server-test:${process.pid}`;
    try {
      const built = builder.build(tag);
      expect(built.status, `${built.stdout}${built.stderr}`).toBe(0);
      const config = JSON.stringify(JSON.parse(builder.inspect(tag)));
      expect(config).toContain('"User":"1000:1000"');
      expect(config).toContain('"8080/tcp"');
      expect(config).toContain('"Entrypoint":["ids-server"]');
      expect(config).toContain('/health/ready');
    } finally {
      builder.remove(tag);
    }
  });
});
