// A new named layout and a new ID encoding are each a change to one file: the engine's table of
// named layouts (packages/engine/src/named-layouts.ts) or its encodings table
// (packages/engine/src/encodings.ts). Each test edits only that file in a copy of the engine's
// source and shows that everything reading the table takes the new entry: for a layout, the
// snowflake `preset` setting (its type, its error message), the `ids` CLI and the `ids-server`
// run as processes on the copy, and the inspector page built from it and opened in Chromium;
// for an encoding, the encoders and auto-detection; for a store's machine-ID step, the `auto`
// chain of the CLI, the server and the library.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { freePort } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildPage } from '../packages/inspector/src/build/page.js';
import { launch, type PageServer, servePage } from '../packages/inspector/test/browser.js';
import { applicationResolution } from './lib/application-resolution.js';
import { engineSwapArgs } from './lib/engine-swap.js';
import { listening } from './lib/listening.js';
import { type ChangedCopy, copyWithOneFileChanged } from './lib/one-file-change.js';
import { describeRun, root, run } from './lib/workspace.js';

const copies: ChangedCopy[] = [];

/** `text` with `from` replaced by `to`; throws when `from` is not there, so a fixture edit never silently does nothing. */
function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`fixture edit: ${JSON.stringify(from)} not found in the file`);
  return text.replace(from, to);
}
afterAll(() => {
  for (const copy of copies) copy.remove();
});

describe('a new named layout', () => {
  const copy = copyWithOneFileChanged(join(root, 'packages', 'engine'), 'named-layouts.ts', (text) =>
    edit(
      text,
      'export const NAMED_LAYOUTS = {',
      `export const NAMED_LAYOUTS = {
  /** A fixture's layout: Twitter's bits from 2020. */
  fixture: entry({
    name: 'fixture',
    label: 'Fixture',
    family: 'snowflake',
    layout: defineLayout({ name: 'fixture', ...SNOWFLAKE_BITS, epochMs: Date.UTC(2020, 0, 1) }),
  }),`,
    ),
  );
  copies.push(copy);
  const EPOCH = Date.UTC(2020, 0, 1);
  // Made by hand in the fixture's bits: 2024-01-02T03:04:05.670Z, machine 7, sequence 5.
  const TIME = Date.UTC(2024, 0, 2, 3, 4, 5, 670);
  const ID = (BigInt(TIME - EPOCH) << 22n) | (7n << 12n) | 5n;
  /** `node --import …`: the built packages, run on the copy of the engine. */
  let onCopy: string[];
  const ids = (...args: string[]) =>
    run(process.execPath, [...onCopy, join(root, 'packages', 'cli', 'bin', 'ids.js'), ...args], {
      cwd: root,
    });

  beforeAll(async () => {
    onCopy = await engineSwapArgs(copy.index);
  });

  it('is one file', () => {
    expect(copy.changed).toEqual(['named-layouts.ts']);
  });

  it('is taken by the snowflake preset setting and named by its error message', async () => {
    // @ids/snowflake's source, importing the copy of the engine.
    const engine = (await import(copy.index)) as typeof import('@ids/engine');
    vi.doMock('@ids/engine', () => engine);
    vi.doMock('@ids/engine/flavour', () => import(join(dirname(copy.index), 'flavour.ts')));
    vi.doMock('@ids/engine/internal', () => import(join(dirname(copy.index), 'internal.ts')));
    const snowflake = (await import('../packages/snowflake/src/index.js')) as typeof import('@ids/snowflake');
    const generator = new snowflake.Snowflake({ preset: 'fixture' as never, machineId: 3 });
    expect(generator.layout.name).toBe('fixture');
    expect(generator.layout.epochMs).toBe(EPOCH);
    expect(() => new snowflake.Snowflake({ preset: 'nope' as never, machineId: 1 })).toThrow(
      "preset: expected 'fixture', 'twitter' or 'discord', received \"nope\" (string)",
    );
    await generator.close();
    vi.doUnmock('@ids/engine');
    vi.doUnmock('@ids/engine/flavour');
    vi.doUnmock('@ids/engine/internal');
  });

  it('is a layout of the ids CLI: --layout takes it, its help and `ids compare` list it', async () => {
    const decompose = await ids('decompose', '--json', '--layout', 'fixture', ID.toString());
    expect(decompose.status, describeRun('ids decompose', decompose)).toBe(0);
    expect(JSON.parse(decompose.stdout)).toEqual([
      expect.objectContaining({
        layout: 'fixture',
        time: new Date(TIME).toISOString(),
        machine: 7,
        sequence: 5,
      }),
    ]);
    const compare = await ids('compare', '--json');
    expect(compare.status, describeRun('ids compare', compare)).toBe(0);
    expect(JSON.parse(compare.stdout)).toContainEqual(
      expect.objectContaining({ name: 'fixture', epoch: new Date(EPOCH).toISOString() }),
    );
    const help = await ids('decompose', '--help');
    // Help wraps at 100 columns: the list may be split over lines.
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(
      /\bfixture, sonyflake, sonyflake-v2, twitter, discord, snowflake\b/,
    );
    // A generator of it: a Snowflake of the preset, in the built @ids/snowflake.
    const generate = await ids('generate', '--json', '--layout', 'fixture', '--machine-id', '7');
    expect(generate.status, describeRun('ids generate', generate)).toBe(0);
    expect(JSON.parse(generate.stdout)).toMatchObject({ layout: 'fixture', machineId: 7 });
  });

  it('is a layout of ids-server: --layout takes it, GET /layout describes it, GET /id issues its IDs', async () => {
    const server = join(root, 'packages', 'server', 'dist', 'bin.js');
    const help = await run(process.execPath, [...onCopy, server, '--help'], { cwd: root });
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'fixture, sonyflake, sonyflake-v2, twitter, discord, snowflake',
    );
    const child = spawn(process.execPath, [...onCopy, server, '--layout', 'fixture', '--machine-id', '7'], {
      cwd: root,
      env: { ...process.env, HOST: '127.0.0.1', PORT: '0', IDS_DRAIN_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const closed = new Promise((resolve) => child.once('close', resolve));
    try {
      const url = await listening(child);
      const layout = await (await fetch(`${url}/layout`)).json();
      expect(layout).toMatchObject({
        name: 'fixture',
        epoch: new Date(EPOCH).toISOString(),
        machineBits: 10,
      });
      const { id } = (await (await fetch(`${url}/id`)).json()) as { id: string };
      const engine = (await import(copy.index)) as typeof import('@ids/engine');
      expect(engine.decomposeIn(engine.namedLayout('fixture')!.layout, BigInt(id)).machine).toBe(7);
    } finally {
      child.kill('SIGTERM');
      await closed;
    }
  });

  it('is listed by the inspector page built from it, in Chromium: in the layout select and the comparison', async () => {
    const page = await buildPage(join(root, 'packages', 'inspector'), dirname(dirname(copy.index)));
    let server: PageServer | undefined;
    let browser: Awaited<ReturnType<typeof launch>> | undefined;
    try {
      server = await servePage(page.html);
      browser = await launch();
      const tab = await browser.newPage();
      await tab.goto(server.url);
      await tab.waitForSelector('html[data-ready="true"]');
      expect(await tab.locator('#layout option[value="fixture"]').textContent()).toBe('Fixture');
      await tab.fill('#ids', ID.toString());
      await tab.selectOption('#layout', 'fixture');
      await tab.click('#inspect-button');
      await expect.poll(() => tab.getAttribute('.card .pick', 'data-layout')).toBe('fixture');
      expect(await tab.textContent('.card .start')).toBe(new Date(TIME).toISOString());
      await tab.click('#tab-compare');
      expect(await tab.locator('#figures tr[data-layout="fixture"] .date').textContent()).toBe('2020-01-01');
    } finally {
      await browser?.close();
      await server?.close();
    }
  });
});

describe('a new encoding', () => {
  const copy = copyWithOneFileChanged(join(root, 'packages', 'engine'), 'encodings.ts', (text) =>
    edit(
      edit(text, "  | 'base36';", "  | 'base36'\n  | 'base36upper';"),
      '  base36: {',
      `  base36upper: {
    name: 'base36upper',
    description: 'upper-case base36',
    alphabet: '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    fixedWidth: false,
  },
  base36: {`,
    ),
  );
  copies.push(copy);

  it('is one file', () => {
    expect(copy.changed).toEqual(['encodings.ts']);
  });

  it('encodes, decodes, is listed and is detected', async () => {
    const engine = (await import(copy.index)) as typeof import('@ids/engine');
    const id = 1427970479175499776n;
    const text = engine.encodeId(id, 'base36upper' as never);
    expect(text).toBe(id.toString(36).toUpperCase());
    expect(engine.decodeId(text, 'base36upper' as never)).toBe(id);
    expect(engine.ENCODING_NAMES).toContain('base36upper');
    // Detection tries it too: the text is read by it (and by other alphabets that hold these
    // letters, which then makes it ambiguous, with the new encoding among the candidates).
    let candidates: readonly { id: bigint; encoding: string }[];
    try {
      const read = (await import(join(dirname(copy.index), 'read.ts'))) as typeof import('@ids/engine/read');
      candidates = [read.decodeAnyId(text)];
    } catch (error) {
      expect(error).toBeInstanceOf(engine.AmbiguousIdError);
      candidates = (error as InstanceType<typeof engine.AmbiguousIdError>).candidates;
    }
    expect(candidates).toContainEqual({ id, encoding: 'base36upper' });
  });
});

describe('a changed store-table entry', () => {
  // The Redis entry is read by segment stores and by locks: its form, changed in the engine's one
  // table of store strings, shows in every message that lists what a store string may be.
  const copy = copyWithOneFileChanged(join(root, 'packages', 'engine'), 'stores.ts', (text) =>
    edit(text, "form: 'redis://...',", "form: 'redis://HOST:PORT',"),
  );
  copies.push(copy);
  let onCopy: string[];
  const bin = (pkg: string, file: string, ...args: string[]) =>
    run(process.execPath, [...onCopy, join(root, 'packages', pkg, ...file.split('/')), ...args], {
      cwd: root,
      env: { ...process.env, IDS_CLAIM_DIR: `${copy.index}.claims` },
    });

  beforeAll(async () => {
    onCopy = await engineSwapArgs(copy.index);
  });

  it('is one file', () => {
    expect(copy.changed).toEqual(['stores.ts']);
  });

  it('is followed by ids generate --scheme segment, ids lock and ids-server --segment-store', async () => {
    const generate = await bin(
      'cli',
      'bin/ids.js',
      'generate',
      '--scheme',
      'segment',
      '--store',
      'mongodb://x',
    );
    expect(generate.stderr, describeRun('ids generate', generate)).toMatch(
      /mysql:\/\/\.\.\., redis:\/\/HOST:PORT, pglite:/,
    );
    const lock = await bin('cli', 'bin/ids.js', 'lock', '--store', 'ftp://x', 'n', '--', 'true');
    expect(lock.stderr, describeRun('ids lock', lock)).toMatch(
      /--store: expected redis:\/\/HOST:PORT, http:/,
    );
    const server = await bin('server', 'dist/bin.js', '--segment-store', 'mongodb://x');
    expect(server.status, describeRun('ids-server', server)).toBe(2);
    expect(server.stderr).toMatch(/segment-store: .*redis:\/\/HOST:PORT, pglite:/);
  });

  it('is followed by openSegmentStore in the library', async () => {
    vi.doMock('@ids/engine/internal', () => import(join(dirname(copy.index), 'internal.ts')));
    const segment = (await import(
      '../packages/segment/src/open.js'
    )) as typeof import('../packages/segment/src/open.js');
    await expect(segment.openSegmentStore('mongodb://x')).rejects.toThrow(/redis:\/\/HOST:PORT, pglite:/);
    vi.doUnmock('@ids/engine/internal');
  });
});

describe("a changed store-table entry's machine-ID step", () => {
  // The Redis entry's variables, changed in the engine's one table of stores: the `auto` chain of
  // the CLI, the server and the library (Sonyflake.create) all put the Redis step in where the
  // new variable is set, and none where only the old one is.
  const copy = copyWithOneFileChanged(join(root, 'packages', 'engine'), 'stores.ts', (text) =>
    edit(text, "env: ['IDS_MACHINE_ID_REDIS_URL', 'IDS_REDIS_URL'],", "env: ['IDS_FIXTURE_REDIS_URL'],"),
  );
  copies.push(copy);
  let onCopy: string[];
  let redisUrl: string;
  /** A run on the copy of the engine, in an environment of only the user's non-IDS variables and `env`. */
  const onCopyRun = (args: string[], env: Record<string, string>) =>
    run(process.execPath, [...onCopy, ...args], {
      cwd: root,
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('IDS_'))),
        IDS_CLAIM_DIR: `${copy.index}.claims`,
        ...env,
      },
    });
  const ids = (args: string[], env: Record<string, string>) =>
    onCopyRun([join(root, 'packages', 'cli', 'bin', 'ids.js'), ...args], env);
  const server = (env: Record<string, string>) =>
    onCopyRun([join(root, 'packages', 'server', 'dist', 'bin.js')], { HOST: '127.0.0.1', PORT: '0', ...env });
  const library = (env: Record<string, string>) =>
    onCopyRun([...applicationResolution(), join(root, 'test', 'fixtures', 'auto-library.mjs')], env);
  // Where the step fails at once, so a run that has the step shows it: nothing listens there.
  const failed =
    /Redis claim: failed - could not claim a machine ID in Redis at redis:\/\/127\.0\.0\.1:\d+ \(IDS_FIXTURE_REDIS_URL\)/;

  beforeAll(async () => {
    onCopy = await engineSwapArgs(copy.index);
    redisUrl = `redis://127.0.0.1:${await freePort()}`;
  });

  it('is one file', () => {
    expect(copy.changed).toEqual(['stores.ts']);
  });

  it('is followed by ids machine-id and ids generate: the step comes with the new variable, not the old', async () => {
    const explain = await ids(['machine-id', '--explain'], { IDS_FIXTURE_REDIS_URL: redisUrl });
    expect(explain.status, describeRun('ids machine-id', explain)).toBe(1);
    expect(explain.stderr).toMatch(failed);
    const generate = await ids(['generate'], { IDS_FIXTURE_REDIS_URL: redisUrl });
    expect(generate.status, describeRun('ids generate', generate)).toBe(1);
    expect(generate.stderr).toMatch(failed);
    const old = await ids(['machine-id', '--json'], { IDS_REDIS_URL: redisUrl });
    expect(old.status, describeRun('ids machine-id', old)).toBe(0);
    expect(JSON.parse(old.stdout).trail.map((s: { step: string }) => s.step)).not.toContain('redis');
    const help = await ids(['machine-id', '--help'], {});
    expect(help.stdout).toContain('Redis claim         with IDS_FIXTURE_REDIS_URL set');
  });

  it('is followed by ids-server: its auto chain and its redis source', async () => {
    const auto = await server({ IDS_FIXTURE_REDIS_URL: redisUrl });
    expect(auto.status, describeRun('ids-server', auto)).toBe(1);
    expect(auto.stderr).toMatch(failed);
    const named = await server({ IDS_MACHINE_ID_SOURCE: 'redis', IDS_REDIS_URL: redisUrl });
    expect(named.status, describeRun('ids-server', named)).toBe(2);
    expect(named.stderr).toMatch(
      /machine-id-source redis: expected where the store is \(IDS_FIXTURE_REDIS_URL\)/,
    );
  });

  it("is followed by the library's Sonyflake.create({ machineId: 'auto' })", async () => {
    const made = await library({ IDS_FIXTURE_REDIS_URL: redisUrl });
    expect(made.status, describeRun('the library', made)).not.toBe(0);
    expect(made.stderr).toMatch(failed);
  });
});
