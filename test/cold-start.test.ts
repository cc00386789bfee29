// Cold start: importing @ids/sonyflake or @ids/snowflake and making an ID with the machine ID
// given must not load the Node built-ins only some providers need (node:http for EC2's metadata
// service, node:os for the interface list, node:fs, whose ES-module facade pulls in the stream
// stack). Each loads in a few ms of CPU, which test/bench/cold-start.mjs measures; this test
// keeps them out. A fresh `node` runs the built packages as a user's program would, from ESM and
// from CommonJS, and reports which built-ins the import and the first ID added to
// `process.moduleLoadList` (Node's own record of every built-in it has loaded).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { closedLoopbackEndpoint } from '@ids/test-services';
import { describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));

/** Built-ins that cost milliseconds to load and that no generator needs for an ID with its machine ID given. */
const HEAVY = [
  'http',
  'https',
  'http2',
  'net',
  'tls',
  'dns',
  'stream',
  'internal/fs/streams',
  'os',
  'crypto',
  'zlib',
  'child_process',
  'worker_threads',
];

type Mode = 'esm' | 'cjs';

interface Loaded {
  /** The ID made, as decimal text. */
  readonly id: string;
  /** Built-ins (`NativeModule x` entries, as `x`) loaded by the import and by `after`, in order. */
  readonly builtins: string[];
}

/**
 * Loads `specifier` as `m` (import or require) and then runs `after` (statements, in an async
 * function) in a fresh node, from this directory (so the workspace's built packages resolve),
 * and returns the ID `after` leaves in `id` and the built-ins loaded since just before the load.
 */
function coldRun(mode: Mode, specifier: string, after: string): Loaded {
  const load =
    mode === 'esm'
      ? `const m = await import(${JSON.stringify(specifier)});`
      : `const m = require(${JSON.stringify(specifier)});`;
  const script = [
    '(async () => {',
    'const before = new Set(process.moduleLoadList);',
    load,
    'let id = "";',
    after,
    'const builtins = process.moduleLoadList.filter((e) => !before.has(e) && e.startsWith("NativeModule ")).map((e) => e.slice(13));',
    'process.stdout.write(JSON.stringify({ id: String(id), builtins }));',
    '})().catch((error) => { console.error(error); process.exit(1); });',
  ].join('\n');
  const args = mode === 'esm' ? ['--input-type=module', '-e', script] : ['-e', script];
  const run = spawnSync(process.execPath, args, { cwd: here, encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`node ${mode} ${specifier} exited with ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout) as Loaded;
}

const heavyIn = (builtins: readonly string[]) => builtins.filter((name) => HEAVY.includes(name));

describe.each<Mode>(['esm', 'cjs'])('a fresh process (%s)', (mode) => {
  it.each([
    ['@ids/sonyflake', 'id = new m.Sonyflake({ machineId: 7 }).nextIdSync();'],
    ['@ids/snowflake', 'id = new m.Snowflake({ machineId: 7 }).nextIdSync();'],
    ['@ids/machine-ip', 'id = 1n;'],
  ])('import %s and a first ID load none of the heavy built-ins', (specifier, after) => {
    const { id, builtins } = coldRun(mode, specifier, after);
    expect(id).toMatch(/^[1-9][0-9]*$/);
    // The import did load something (the package itself needs Node's resolver): the list is live.
    expect(builtins.length).toBeGreaterThan(0);
    expect(heavyIn(builtins)).toEqual([]);
  });

  // The same probe sees a heavy built-in when one is loaded, so the checks above can fail: the
  // providers load theirs on first use, and node:http itself loads its stack at import.
  it('sees node:os loaded when the private-IPv4 provider runs, node:http when the EC2 one does, and with node:http imported', async () => {
    const provider = coldRun(
      mode,
      '@ids/machine-ip',
      [
        "const routes = m.procRoutes('IPv4');",
        'if (typeof routes !== "string") throw new Error("no route table");',
        'try { m.privateIpMachineId()({ bits: 16 }); } catch (error) { if (!(error instanceof m.NoPrivateAddressError)) throw error; }',
        'id = 1n;',
      ].join('\n'),
    );
    // node:fs is loaded by Node's own startup, so only the route table read shows it works lazily.
    expect(heavyIn(provider.builtins)).toEqual(['os']);
    // Off EC2 (a closed loopback port): the provider loads node:http for its request and fails.
    const endpoint = await closedLoopbackEndpoint();
    const ec2 = coldRun(
      mode,
      '@ids/machine-ip',
      [
        `try { await m.ec2PrivateIPv4({ endpoint: ${JSON.stringify(endpoint)}, timeoutMs: 5000 }); }`,
        'catch (error) { if (!(error instanceof m.StoreUnavailableError)) throw error; }',
        'id = 1n;',
      ].join('\n'),
    );
    expect(heavyIn(ec2.builtins)).toEqual(expect.arrayContaining(['http', 'net', 'stream']));
    const http = coldRun(mode, 'node:http', 'id = 1n;');
    expect(heavyIn(http.builtins)).toEqual(expect.arrayContaining(['http', 'net', 'stream']));
  });
});
