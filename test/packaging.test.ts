// What we publish is what we test: every package under packages/* is packed with `pnpm pack`
// (workspace:^ ranges become real versions), checked with publint and @arethetypeswrong/cli,
// then all the tarballs are installed with npm into a scratch project outside the workspace and
// loaded from ESM and from CommonJS there. Packages are found by reading packages/*/package.json,
// so one added later is covered without editing this file.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { valueExportsOfDeclarations } from './lib/dts-exports.js';
import {
  describeRun,
  pnpmCommand,
  publishedPackages,
  type RunResult,
  root,
  run,
  type WorkspacePackage,
} from './lib/workspace.js';

const packages = publishedPackages();
const scratch = mkdtempSync(join(tmpdir(), 'ids-packaging-'));
const tarballs = join(scratch, 'tarballs');
const project = join(scratch, 'project');
const tarballOf = new Map<string, string>();
/** @arethetypeswrong's verdicts, started once the tarballs exist, while npm installs them. */
let attwVerdicts: Promise<Record<string, string[]>>;
let controlTarball = '';

/** Tarball file names of a packed package, e.g. "@ids/sonyflake" 0.1.0 -> "ids-sonyflake-0.1.0.tgz". */
const tarballName = (pkg: WorkspacePackage) =>
  `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`;

/** Files inside a tarball, and one file's text, read with the system tar (present wherever npm works). */
async function tarList(file: string): Promise<string[]> {
  const listing = await run('tar', ['-tzf', file], { cwd: scratch });
  if (listing.status !== 0) throw new Error(describeRun(`tar -tzf ${file}`, listing));
  return listing.stdout.split('\n').filter(Boolean);
}
async function tarRead(file: string, member: string): Promise<string> {
  const read = await run('tar', ['-xzOf', file, member], { cwd: scratch });
  if (read.status !== 0) throw new Error(describeRun(`tar -xzOf ${file} ${member}`, read));
  return read.stdout;
}

/** A tarball unpacked once into the scratch folder: its package/ folder. */
const unpackedDirs = new Map<string, Promise<string>>();
function unpacked(file: string): Promise<string> {
  let dir = unpackedDirs.get(file);
  if (!dir) {
    const into = join(scratch, 'unpacked', file.slice(tarballs.length + 1));
    mkdirSync(into, { recursive: true });
    dir = run('tar', ['-xzf', file, '-C', into], { cwd: scratch }).then((result) => {
      if (result.status !== 0) throw new Error(describeRun(`tar -xzf ${file}`, result));
      return join(into, 'package');
    });
    unpackedDirs.set(file, dir);
  }
  return dir;
}

/** Paths of the files under `dir`, relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(dir, join(prefix, entry.name)) : [join(prefix, entry.name)],
  );
}

/**
 * Code that is test machinery, by what only it contains: @ids/test-services' launchers (etcd,
 * Redis, PostgreSQL, MariaDB), its TCP proxy and its fake EC2 metadata service. Such code lives in
 * that private package and must not reach a tarball, under any file name or bundled into another.
 */
const TEST_MACHINERY: readonly RegExp[] = [
  /\bstart(Etcd|Redis|Postgres|Mariadb)\b/,
  /--initial-cluster-token/,
  /\bTcpProxy\b/,
  /\bstartImdsTestServer\b|\bclosedLoopbackEndpoint\b|captive portal/,
];

/** Each module a package exports (".", "./sub"), with the declaration file for import and for require. */
function entryPoints(
  manifest: Record<string, unknown>,
): { specifier: string; types: Record<'import' | 'require', string | undefined> }[] {
  const exportsField = manifest.exports as Record<string, unknown> | undefined;
  if (!exportsField || typeof exportsField !== 'object') return [];
  const typesOf = (target: unknown, condition: 'import' | 'require'): string | undefined => {
    if (!target || typeof target !== 'object') return undefined;
    const record = target as Record<string, unknown>;
    const branch = record[condition];
    if (branch && typeof branch === 'object') return (branch as Record<string, string>).types;
    return typeof record.types === 'string' ? record.types : undefined;
  };
  return Object.entries(exportsField)
    .filter(([subpath]) => subpath.startsWith('.') && !subpath.endsWith('.json') && !subpath.includes('*'))
    .map(([subpath, target]) => ({
      specifier: `${manifest.name}${subpath.slice(1)}`,
      types: { import: typesOf(target, 'import'), require: typesOf(target, 'require') },
    }));
}

/** The command names a package installs (`bin` as a string is named after the package). */
function binNames(manifest: Record<string, unknown>): string[] {
  const bin = manifest.bin;
  if (typeof bin === 'string') return [String(manifest.name).replace(/^@[^/]+\//, '')];
  return bin && typeof bin === 'object' ? Object.keys(bin) : [];
}

beforeAll(async () => {
  mkdirSync(tarballs, { recursive: true });
  const [pnpm, pre] = pnpmCommand();
  // pnpm pack reads only the built dist/: npm test builds every package before any test runs.
  const packs = await Promise.all(
    packages.map((pkg) => run(pnpm, [...pre, 'pack', '--pack-destination', tarballs], { cwd: pkg.dir })),
  );
  packs.forEach((result, i) => {
    if (result.status !== 0) throw new Error(describeRun(`pnpm pack in ${packages[i]!.dir}`, result));
  });
  const made = new Set(readdirSync(tarballs));
  for (const pkg of packages) {
    const name = tarballName(pkg);
    if (!made.has(name))
      throw new Error(`pnpm pack of ${pkg.name} made no ${name}; found ${[...made].join(', ')}`);
    tarballOf.set(pkg.name, join(tarballs, name));
  }
  controlTarball = await brokenTarball();
  attwVerdicts = attw([...tarballOf.values(), controlTarball]);
  // Settled here too, so that a failed run is reported by the tests that read it, not as unhandled.
  attwVerdicts.catch(() => undefined);
  attwCliRuns = attwCommand([...tarballOf.values(), controlTarball]);
  attwCliRuns.catch(() => undefined);
});

/**
 * The @arethetypeswrong/cli command itself, run on each tarball with the same profile, two at a
 * time (about a second of CPU each): what a maintainer runs by hand must pass too, not only our
 * reading of its library.
 */
let attwCliRuns: Promise<Map<string, RunResult>>;
async function attwCommand(tarballs: string[]): Promise<Map<string, RunResult>> {
  const bin = join(root, 'test', 'node_modules', '.bin', 'attw');
  const results = new Map<string, RunResult>();
  const queue = [...tarballs];
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      results.set(file, await run(bin, [file, '--profile', 'node16', '--no-color'], { cwd: root }));
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

/**
 * A control package whose require condition serves an ES module and whose types condition
 * comes last, packed by hand (tar) as npm would: package/ at the root of a gzipped tar.
 */
async function brokenTarball(): Promise<string> {
  const dir = join(scratch, 'broken', 'package');
  mkdirSync(join(dir, 'lib'), { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'broken-fixture',
      version: '1.0.0',
      type: 'module',
      files: ['lib'],
      exports: { '.': { import: './lib/index.js', require: './lib/index.js', types: './lib/index.d.ts' } },
    }),
  );
  writeFileSync(join(dir, 'lib', 'index.js'), 'export const answer = 42;\n');
  writeFileSync(join(dir, 'lib', 'index.d.ts'), 'export declare const answer: number;\n');
  const file = join(scratch, 'broken-fixture-1.0.0.tgz');
  const packed = await run('tar', ['-czf', file, '-C', join(scratch, 'broken'), 'package'], { cwd: scratch });
  if (packed.status !== 0) throw new Error(describeRun('tar of the control package', packed));
  return file;
}

/**
 * @arethetypeswrong on tarballs, with the profile chosen below, in one child process
 * (lib/attw.mjs): the problems that fail each one.
 */
async function attw(files: string[]): Promise<Record<string, string[]>> {
  const result = await run(process.execPath, [join(root, 'test', 'lib', 'attw.mjs'), 'node16', ...files], {
    cwd: scratch,
  });
  if (result.status !== 0) throw new Error(describeRun('lib/attw.mjs', result));
  return JSON.parse(result.stdout);
}

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

it('finds the packages to check by reading packages/*/package.json', () => {
  expect(packages.map((pkg) => pkg.name)).toEqual(
    expect.arrayContaining(['@ids/engine', '@ids/sonyflake', '@ids/machine-ip']),
  );
});

describe.each(packages.map((pkg) => [pkg.name, pkg] as const))('%s as packed', (_name, pkg) => {
  it('holds only dist/, bin/, deploy/, package.json and the docs, with workspace ranges replaced by versions', async () => {
    const file = tarballOf.get(pkg.name)!;
    const files = await tarList(file);
    const outside = files.filter(
      (path) =>
        !/^package\/(dist\/.+|bin\/.+|deploy\/.+|package\.json|README\.md|CHANGELOG\.md|LICENSE(\.md)?)$/.test(
          path,
        ),
    );
    expect(outside, 'files outside files: ["dist", "bin", "deploy"] and the docs').toEqual([]);
    // bin/ holds the commands' launchers (committed, so that a fresh clone links them before any
    // build), each as in the repository, and nothing else.
    const bin = pkg.manifest.bin as string | Record<string, string> | undefined;
    const manifestBins = (typeof bin === 'string' ? [bin] : Object.values(bin ?? {})).map(
      (path) => `package/${path.replace(/^\.\//, '')}`,
    );
    expect(files.filter((path) => path.startsWith('package/bin/')).sort()).toEqual(manifestBins.sort());
    for (const launcher of manifestBins) {
      expect(await tarRead(file, launcher), launcher).toBe(
        readFileSync(join(pkg.dir, launcher.slice('package/'.length)), 'utf8'),
      );
    }
    // deploy/ is shipped whole where a package has one (the server's systemd unit, Dockerfile
    // and the image's install files), and nowhere else.
    const deployDir = join(pkg.dir, 'deploy');
    const deployFiles = existsSync(deployDir)
      ? filesUnder(deployDir).map((name) => `package/deploy/${name}`)
      : [];
    expect(files.filter((path) => path.startsWith('package/deploy/')).sort()).toEqual(deployFiles.sort());
    if (pkg.name === '@ids/server') {
      expect(deployFiles).toEqual(
        expect.arrayContaining(['package/deploy/ids-server.service', 'package/deploy/Dockerfile']),
      );
      expect(await tarRead(file, 'package/deploy/Dockerfile')).toBe(
        readFileSync(join(deployDir, 'Dockerfile'), 'utf8'),
      );
    }
    expect(files).toContain('package/package.json');
    const manifest = JSON.parse(await tarRead(file, 'package/package.json'));
    expect(manifest.version).toBe(pkg.version);
    const ranges = {
      ...manifest.dependencies,
      ...manifest.peerDependencies,
      ...manifest.optionalDependencies,
    };
    const unresolved = Object.entries(ranges).filter(([, range]) => String(range).startsWith('workspace:'));
    expect(unresolved, 'dependencies still on the workspace: protocol').toEqual([]);
    for (const [dep, range] of Object.entries(ranges)) {
      const local = packages.find((other) => other.name === dep);
      if (local) expect(range, `${dep} range`).toBe(`^${local.version}`);
    }
  });

  it('holds no test machinery: no testing entry, no launcher, proxy or fake metadata service', async () => {
    const file = tarballOf.get(pkg.name)!;
    const dir = await unpacked(file);
    const files = filesUnder(dir);
    expect(
      files.filter((path) => /(^|\/)testing/.test(path)),
      'files named testing*',
    ).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(Object.keys(manifest.exports ?? {}).filter((subpath) => subpath.includes('testing'))).toEqual([]);
    const found = files
      .filter((path) => path.startsWith('dist/'))
      .flatMap((path) => {
        const text = readFileSync(join(dir, path), 'utf8');
        return TEST_MACHINERY.filter((marker) => marker.test(text)).map((marker) => `${path}: ${marker}`);
      });
    expect(found, 'test machinery in the packed code').toEqual([]);
  });

  it('carries the license, the changelog and where the project lives', async () => {
    const file = tarballOf.get(pkg.name)!;
    const files = await tarList(file);
    expect(files).toContain('package/LICENSE');
    expect(files).toContain('package/CHANGELOG.md');
    expect(await tarRead(file, 'package/LICENSE')).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
    const manifest = JSON.parse(await tarRead(file, 'package/package.json'));
    expect(manifest.license).toBe('MIT');
    const folder = pkg.dir.slice(root.length + 1);
    expect(manifest.repository).toEqual({
      type: 'git',
      url: expect.stringMatching(/^git\+https:\/\/.+\.git$/),
      directory: folder,
    });
    const base = manifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(manifest.homepage).toBe(`${base}/tree/main/${folder}#readme`);
    expect(manifest.bugs).toEqual({ url: `${base}/issues` });
    expect(manifest.keywords.length, 'keywords').toBeGreaterThan(2);
  });

  it('passes publint, warnings and suggestions included', async () => {
    const data = readFileSync(tarballOf.get(pkg.name)!);
    const { messages, pkg: manifest } = await publint({
      pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer },
      level: 'suggestion',
      strict: true,
    });
    expect(
      messages.map((message) => `${message.type}: ${formatMessage(message, manifest, { color: false })}`),
    ).toEqual([]);
  });

  // The profile, node16: the package must resolve, with matching types, under TypeScript's node16
  // resolution from CJS and from ESM (how Node 20+ itself reads the exports map) and under
  // bundler resolution. It skips node10, TypeScript's legacy resolution that ignores "exports"
  // (it only sees main/types, and cannot see subpath exports at all): our engines field says
  // Node >= 20, where no runtime resolves that way. "strict" would add node10; "esm-only" would
  // drop the CommonJS checks that a dual ESM + CJS package must pass.
  it('passes @arethetypeswrong with the node16 profile', async () => {
    expect((await attwVerdicts)[tarballOf.get(pkg.name)!]).toEqual([]);
  });

  it('passes the @arethetypeswrong/cli command with the node16 profile', async () => {
    const result = (await attwCliRuns).get(tarballOf.get(pkg.name)!)!;
    expect(result.status, describeRun(`attw ${pkg.name}`, result)).toBe(0);
    // The runs go two at a time over every tarball: the first test waits for several of them.
  }, 240_000);
});

describe('the checks catch a broken package', () => {
  // The control (see brokenTarball): if publint or attw stopped reporting problems (a wrong
  // option, a tarball not read), the checks above would pass vacuously; these show they fail.
  it('publint reports the types condition after the others', async () => {
    const data = readFileSync(controlTarball);
    const { messages } = await publint({
      pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer },
      strict: true,
    });
    expect(messages.map((message) => message.code)).toContain('EXPORTS_TYPES_SHOULD_BE_FIRST');
  });

  it('attw fails it with the same profile', async () => {
    expect((await attwVerdicts)[controlTarball]!.join('\n')).toMatch(/^CJSResolvesToESM \(\., node16-cjs\)/m);
  });

  it('so does the attw command', async () => {
    const result = (await attwCliRuns).get(controlTarball)!;
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/ESM.*CJS|CJSResolvesToESM|Accidental ESM|ESM \(dynamic import only\)/i);
  });
});

/** What scratch-probe.cjs reports for a generator it drove (see its recipes). */
interface Smoke {
  ids: string[];
  lastMachine: number;
  createdMachine?: number;
  badMachineId?: { name: string; code: string; isIdsError: boolean };
  badId?: { name: string; code: string; isIdsError: boolean };
}

/**
 * npm install of `specs` (tarballs, or names from the registry) in `cwd`.
 */
function npmInstall(cwd: string, specs: readonly string[]): Promise<RunResult> {
  return run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      // A registry that cannot be reached (a proxy's certificate not trusted, say) fails in
      // seconds with npm's own error, instead of minutes of retries. npm checks that the
      // minimum wait does not exceed the maximum (its default minimum is 10 s) only when it
      // fetches, i.e. with an empty cache: set both, or a fresh machine fails here.
      '--fetch-retries=1',
      // npm's minimum (10 s) above the maximum fails every fetch ("minTimeout is greater than
      // maxTimeout"), which shows only when a dependency is missing from npm's cache.
      '--fetch-retry-mintimeout=1000',
      '--fetch-retry-maxtimeout=5000',
      '--loglevel=error',
      ...specs,
    ],
    { cwd, timeoutMs: 300_000 },
  );
}

describe('installed from the tarballs into a scratch project outside the workspace', () => {
  let install: RunResult;
  let declared = new Map<string, string[]>();
  const probes: Record<
    'esm' | 'cjs',
    Record<string, { exports: string[]; smoke: Record<string, Smoke | undefined>; error?: string }>
  > = {
    esm: {},
    cjs: {},
  };
  const specifiers = packages.flatMap((pkg) => entryPoints(pkg.manifest).map((entry) => entry.specifier));

  // The hook may take as long as the install may (the registry can be slow to answer, which is
  // not a packaging defect): vitest's default hook timeout would cut it off at a minute.
  beforeAll(async () => {
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'ids-scratch', private: true }));
    // Third-party dependencies (ipaddr.js, ...) come from the registry; --prefer-offline takes
    // them from npm's cache when it has them, which keeps repeated runs fast.
    install = await npmInstall(project, [...tarballOf.values()]);
    if (install.status !== 0) throw new Error(describeRun('npm install of the tarballs', install));
    // One TypeScript program over every package's declarations: they share engine's and their
    // dependencies' types, which one program parses once.
    declared = valueExportsOfDeclarations(
      packages.flatMap((pkg) =>
        entryPoints(pkg.manifest).flatMap((entry) =>
          Object.values(entry.types)
            .filter((file): file is string => file !== undefined)
            .map((file) => join(project, 'node_modules', pkg.name, file)),
        ),
      ),
    );
    copyFileSync(join(root, 'test', 'lib', 'scratch-probe.cjs'), join(project, 'probe.cjs'));
    for (const mode of ['esm', 'cjs'] as const) {
      const probe = await run(process.execPath, ['probe.cjs', mode, ...specifiers], { cwd: project });
      if (probe.status !== 0) throw new Error(describeRun(`the ${mode} probe`, probe));
      probes[mode] = JSON.parse(probe.stdout);
    }
  }, 330_000);

  it('installs each package from its tarball, with no second copy of an @ids package', () => {
    for (const pkg of packages) {
      const installed = JSON.parse(
        readFileSync(join(project, 'node_modules', pkg.name, 'package.json'), 'utf8'),
      );
      expect(installed.version, pkg.name).toBe(pkg.version);
      // A nested @ids folder would mean npm fetched some @ids package from the registry
      // instead of using the tarball we just made.
      expect(existsSync(join(project, 'node_modules', pkg.name, 'node_modules', '@ids'))).toBe(false);
    }
  });

  describe.each(packages.map((pkg) => [pkg.name, pkg] as const))('%s', (_name, pkg) => {
    const entries = entryPoints(pkg.manifest);

    const bins = binNames(pkg.manifest);

    it.runIf(bins.length > 0)('links its commands into node_modules/.bin', () => {
      for (const bin of bins) expect(existsSync(join(project, 'node_modules', '.bin', bin)), bin).toBe(true);
    });

    it.runIf(entries.length > 0 || bins.length === 0)(
      'loads from ESM and from CJS with exactly the value exports its declarations list',
      () => {
        expect(
          entries.length,
          'modules in its exports map (a package needs exports or a bin)',
        ).toBeGreaterThan(0);
        for (const entry of entries) {
          for (const condition of ['import', 'require'] as const) {
            expect(
              entry.types[condition],
              `${entry.specifier}: types for the ${condition} condition`,
            ).toBeDefined();
          }
        }
        for (const entry of entries) {
          for (const [mode, condition] of [
            ['esm', 'import'],
            ['cjs', 'require'],
          ] as const) {
            const loaded = probes[mode][entry.specifier];
            expect(loaded?.error, `${mode} load of ${entry.specifier}`).toBeUndefined();
            const names = declared.get(join(project, 'node_modules', pkg.name, entry.types[condition]!));
            expect(
              names!.length,
              `value exports declared for ${entry.specifier} (${condition})`,
            ).toBeGreaterThan(0);
            expect(
              loaded!.exports,
              `${entry.specifier} from ${mode}: run-time exports vs declarations`,
            ).toEqual(names);
          }
        }
      },
    );
  });

  // A consumer with the strictest common settings compiles against the installed declarations
  // (not skipped with skipLibCheck), in both module systems, using each entry point.
  it('its declarations compile under strict + exactOptionalPropertyTypes + noUncheckedIndexedAccess', async () => {
    const consumer = join(project, 'consumer');
    mkdirSync(consumer, { recursive: true });
    const imports = specifiers.map((specifier, i) => `import * as entry${i} from '${specifier}';`);
    const uses = specifiers.map((_specifier, i) => `void entry${i};`);
    const body = [
      ...imports,
      "import { Sonyflake, type SonyflakeSettings } from '@ids/sonyflake';",
      "import { Snowflake } from '@ids/snowflake';",
      "import { autoMachineId } from '@ids/machine-file';",
      ...uses,
      'export async function main(): Promise<string> {',
      "  const settings: SonyflakeSettings = { machineId: 1, sameMachineId: 'allow' };",
      '  await using sonyflake = await Sonyflake.create(settings);',
      "  const snowflake = new Snowflake({ preset: 'discord', machineParts: { worker: 1, process: 2 } });",
      '  const auto = autoMachineId({ env: { IDS_MACHINE_ID: "3" } });',
      "  const other = new Sonyflake({ machineId: auto, sameMachineId: 'allow' });",
      '  const id: bigint = await sonyflake.nextId();',
      '  await snowflake.close();',
      '  await other.close();',
      "  return [id, JSON.stringify(sonyflake)].join(' ');",
      '}',
    ];
    writeFileSync(join(consumer, 'index.mts'), `${body.join('\n')}\n`);
    writeFileSync(join(consumer, 'index.cts'), `${body.join('\n').replaceAll('await using', 'const')}\n`);
    const tsconfig = {
      compilerOptions: {
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2023', 'esnext.disposable'],
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
        noEmit: true,
        skipLibCheck: false,
      },
      files: ['index.mts', 'index.cts'],
    };
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    const tsc = await run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', consumer], {
      cwd: consumer,
      timeoutMs: 230_000,
    });
    expect(tsc.status, describeRun('tsc in the consumer project', tsc)).toBe(0);
    // A whole program without skipLibCheck (Node's types included) takes a while on a busy machine.
  }, 240_000);

  it('runs a Sonyflake from ESM and from CJS', () => {
    for (const mode of ['esm', 'cjs'] as const) {
      const smoke = probes[mode]['@ids/sonyflake']?.smoke.Sonyflake;
      if (!smoke) throw new Error(`${mode}: the probe did not drive Sonyflake`);
      const ids = smoke.ids.map(BigInt);
      expect(ids).toHaveLength(302);
      for (let i = 1; i < ids.length; i++)
        expect(ids[i]! > ids[i - 1]!, `${mode}: increasing at ${i}`).toBe(true);
      expect(smoke.lastMachine).toBe(1);
      expect(smoke.createdMachine).toBe(2);
      expect(smoke.badMachineId).toEqual({
        name: 'InvalidMachineIdError',
        code: 'ERR_IDS_MACHINE_ID',
        isIdsError: true,
      });
    }
  });

  it('runs the engine generator from ESM and from CJS', () => {
    for (const mode of ['esm', 'cjs'] as const) {
      const smoke = probes[mode]['@ids/engine']?.smoke.IdGenerator;
      if (!smoke) throw new Error(`${mode}: the probe did not drive IdGenerator`);
      const ids = smoke.ids.map(BigInt);
      expect(new Set(ids).size).toBe(5001);
      expect(smoke.lastMachine).toBe(5);
      expect(smoke.badId).toEqual({ name: 'InvalidIdError', code: 'ERR_IDS_INVALID_ID', isIdsError: true });
    }
  });
});

/** The @ids packages `names` need installed (their dependencies, not optional peers), names included. */
function idsClosure(names: readonly string[]): string[] {
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
  const found = new Set<string>();
  const visit = (name: string) => {
    const pkg = byName.get(name);
    if (!pkg || found.has(name)) return;
    found.add(name);
    for (const dep of Object.keys((pkg.manifest.dependencies ?? {}) as Record<string, string>)) visit(dep);
  };
  for (const name of names) visit(name);
  return [...found];
}

/** Bytes of the files under `dir` (symbolic links not followed), as a disk-usage count would add them. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** The five largest installed packages with their size, for the message of a size that grew. */
function largestPackages(nodeModules: string): string {
  const sizes: [string, number][] = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === '.bin') continue;
    const names = entry.name.startsWith('@')
      ? readdirSync(join(nodeModules, entry.name)).map((name) => `${entry.name}/${name}`)
      : [entry.name];
    for (const name of names) sizes.push([name, bytesUnder(join(nodeModules, name))]);
  }
  return sizes
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([name, bytes]) => `${name} ${(bytes / 1024 / 1024).toFixed(2)} MB`)
    .join(', ');
}

/** The installed packages (name@version) whose manifest has an install-time script. */
function installScripts(nodeModules: string): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        visit(path);
        continue;
      }
      const manifestFile = join(path, 'package.json');
      if (existsSync(manifestFile)) {
        const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
        const scripts = manifest.scripts ?? {};
        // npm runs `node-gyp rebuild` for a binding.gyp even without an install script.
        if (
          scripts.preinstall ||
          scripts.install ||
          scripts.postinstall ||
          existsSync(join(path, 'binding.gyp'))
        )
          found.push(`${manifest.name}@${manifest.version}`);
      }
      if (existsSync(join(path, 'node_modules'))) visit(join(path, 'node_modules'));
    }
  };
  visit(nodeModules);
  return found;
}

// What a user who wants one ID gets: the store clients (PGlite, gRPC, pg, ioredis) are optional
// peers, installed only by users of that store. Each case is its own scratch project with only
// the tarballs the named packages need.
describe('light installs: only the packages asked for and what they need', () => {
  const MB = 1024 * 1024;
  const installed = async (name: string, wanted: readonly string[]) => {
    const dir = join(scratch, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `ids-${name}`, private: true }));
    const result = await npmInstall(
      dir,
      idsClosure(wanted).map((pkg) => tarballOf.get(pkg)!),
    );
    if (result.status !== 0) throw new Error(describeRun(`npm install in ${name}`, result));
    const bytes = bytesUnder(join(dir, 'node_modules'));
    process.stdout.write(`packaging: ${wanted.join(' + ')} installs ${(bytes / MB).toFixed(2)} MB\n`);
    return { dir, bytes, largest: largestPackages(join(dir, 'node_modules')) };
  };

  it('@ids/cli + @ids/sonyflake: at most 5 MB, no install scripts; ids runs and names what serve and a store need', async () => {
    const { dir, bytes, largest } = await installed('light-cli', ['@ids/cli', '@ids/sonyflake']);
    expect(installScripts(join(dir, 'node_modules'))).toEqual([]);
    expect(bytes / MB, `largest: ${largest}`).toBeLessThanOrEqual(5);
    const ids = await run(join(dir, 'node_modules', '.bin', 'ids'), ['generate', '--machine-id', '1'], {
      cwd: dir,
    });
    expect(ids.status, describeRun('ids generate', ids)).toBe(0);
    expect(ids.stdout.trim()).toMatch(/^\d+$/);
    // The server and the stores are optional peers: each command that needs one names it.
    const serve = await run(join(dir, 'node_modules', '.bin', 'ids'), ['serve', '--port', '0'], { cwd: dir });
    // Exit 2, as ids-server exits for a package it lacks: one code per condition.
    expect(serve.status, describeRun('ids serve', serve)).toBe(2);
    expect(serve.stderr).toContain('ERR_IDS_MISSING_PACKAGE: install @ids/server to use `ids serve`');
    // Its help needs no package: it says what the command is and what to install.
    const help = await run(join(dir, 'node_modules', '.bin', 'ids'), ['serve', '--help'], { cwd: dir });
    expect(help.status, describeRun('ids serve --help', help)).toBe(0);
    expect(help.stdout).toContain('@ids/server is not installed here: install it');
    const segment = await run(
      join(dir, 'node_modules', '.bin', 'ids'),
      ['generate', '--scheme', 'segment', '--store', 'redis://127.0.0.1:1'],
      { cwd: dir },
    );
    expect(segment.status, describeRun('ids generate --scheme segment', segment)).toBe(2);
    expect(segment.stderr).toContain(
      'ERR_IDS_MISSING_PACKAGE: install @ids/segment (and @ids/machine-redis) to use a redis:// segment store',
    );
  }, 330_000);

  it('@ids/server without a store: at most 10 MB; a store it lacks is ERR_IDS_MISSING_PACKAGE naming it', async () => {
    const { dir, bytes, largest } = await installed('light-server', ['@ids/server']);
    expect(installScripts(join(dir, 'node_modules'))).toEqual([]);
    expect(bytes / MB, `largest: ${largest}`).toBeLessThanOrEqual(10);
    expect(existsSync(join(dir, 'node_modules', '@ids', 'segment'))).toBe(false);
    // Port 1 on loopback: nothing is dialled, the store's package fails to load first.
    const server = await run(
      join(dir, 'node_modules', '.bin', 'ids-server'),
      ['--port', '0', '--machine-id', '1', '--segment-store', 'redis://127.0.0.1:1'],
      { cwd: dir },
    );
    expect(server.status, describeRun('ids-server', server)).toBe(2);
    expect(server.stderr).toContain(
      'install @ids/segment (and @ids/machine-redis) to use a redis:// segment store',
    );
  }, 330_000);
});
