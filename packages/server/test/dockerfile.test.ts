// deploy/Dockerfile is read instruction by instruction and checked for what the image promises
// (two stages, a non-root user, a health check on readiness, signals straight to node, only the
// server's tarballs installed, sources that exist), its HEALTHCHECK command is run against a
// real server, and the image is built with buildah (or a running Docker engine) where one is on
// the machine together with the base image: a build never pulls, so without the base image
// stored locally that test is skipped and says why.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, startBin } from './helpers.js';

const ROOT = join(__dirname, '..', '..', '..');
const DOCKERFILE = join(__dirname, '..', 'deploy', 'Dockerfile');

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
  it('has a named build stage and a runtime stage, both on a slim Node 20+ base', () => {
    expect(stages.length).toBe(2);
    const nodeVersion = only(preamble, 'ARG')
      .map((i) => /^NODE_VERSION=(\d+)$/.exec(i.args)?.[1])
      .find(Boolean);
    expect(Number(nodeVersion)).toBeGreaterThanOrEqual(20);
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

  it('installs exactly the tarballs of @ids/server and the @ids packages it depends on or takes as peers, transitively, and the clients of the stores', () => {
    const graph = workspaceDependencies();
    const needed = new Set<string>();
    const visit = (name: string) => {
      if (needed.has(name)) return;
      needed.add(name);
      for (const dep of graph.get(name)?.ids ?? []) visit(dep);
    };
    visit('@ids/server');
    const install = only(runtime, 'RUN').find((i) => i.args.includes('npm install'));
    expect(install, 'a RUN with npm install in the runtime stage').toBeDefined();
    const installed = [...(install?.args ?? '').matchAll(/\.\/ids-([a-z-]+)-\*\.tgz/g)].map(
      (match) => `@ids/${match[1]}`,
    );
    expect(installed.sort()).toEqual([...needed].sort());
    // The stores' clients that no installed @ids package depends on are named with a range.
    const bundled = new Set([...needed].flatMap((name) => graph.get(name)?.own ?? []));
    const clients = new Set(
      [...needed].flatMap((name) => graph.get(name)?.clients ?? []).filter((dep) => !bundled.has(dep)),
    );
    const named = [...(install?.args ?? '').matchAll(/'((?:@[a-z-]+\/)?[a-z0-9.-]+)@[^']+'/g)].map(
      (match) => match[1],
    );
    expect(named.sort()).toEqual([...clients].sort());
    expect(install?.args).toMatch(/--omit=dev/);
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

  it('has a HEALTHCHECK in exec form on /health/ready, run by node', () => {
    const checks = only(runtime, 'HEALTHCHECK');
    expect(checks.length).toBe(1);
    const argv = execForm((checks[0]?.args ?? '').replace(/^CMD\s+/, ''));
    expect(argv?.slice(0, 2)).toEqual(['node', '-e']);
    expect(argv?.[2]).toContain('/health/ready');
  });
});

describe('its HEALTHCHECK command against a real server', () => {
  const argv = execForm((only(runtime, 'HEALTHCHECK')[0]?.args ?? '').replace(/^CMD\s+/, '')) ?? [];
  /** Runs the check as the container would: node, with the image's PORT. */
  const check = (port: number) =>
    spawnSync(process.execPath, argv.slice(1), { env: { PORT: String(port) }, encoding: 'utf8' }).status;

  it('passes while ready, fails once draining and once stopped', async () => {
    const run = await startBin({
      IDS_MACHINE_ID_SOURCE: 'explicit',
      IDS_MACHINE_ID: '7',
      IDS_DRAIN_MS: '600000',
    });
    let stopped = false;
    try {
      expect(check(run.port)).toBe(0);
      run.child.kill('SIGTERM');
      // The drain answers 503 on readiness at once; wait for that answer, not for a time.
      while ((await call(run.url, 'GET', '/health/ready')).status !== 503) {}
      expect(check(run.port)).toBe(1);
      // A second signal ends the drain.
      expect(await run.stop('SIGTERM')).toBe(0);
      stopped = true;
      expect(check(run.port)).toBe(1);
    } finally {
      if (!stopped) await run.stop('SIGKILL');
    }
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
