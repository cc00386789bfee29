// Every shell block (sh, console) of every README, run in order as a user types it: one bash
// script per block, stopping at the first command that fails. Where a block is typed is its info
// string's second word:
//   ```sh            a new, empty folder beside a checkout of this repository named `ids`, as the
//                    READMEs' `npm install ../ids/packed/*.tgz` assume: only what the block
//                    installs is there.
//   ```sh repo       the root of the checkout (this repository, which npm test has built).
//   ```sh installed  the project of the root README's Installing block (`npm run pack`, then
//                    `npm install ../ids/packed/*.tgz` in ../your-project), which runs first.
// The packages are packed once, by that Installing block itself; each block that installs them
// does so into its own folder. npm reads third-party packages from its cache when it has them.
// Commands from a block's node_modules/.bin run by name, as `npx` would run them.
//
// A server (`ids-server`, the id-server example) is started in the background and must answer
// GET /health/ready; the block's next lines (curl ...) then run against it, and it is stopped
// with SIGTERM (exit 0 required) before the next server starts or when the block ends. The ports
// a block names (8080, 9000, 6379) are swapped for free ones, since other tests share this
// machine; a block naming redis://127.0.0.1:6379 gets a Redis started for it. A curl line must
// get a 2xx answer (a user would see an error body; the test needs curl's exit code to say so).
// A `console` block's `$` lines are run the same way, and the lines after each, up to the next
// `$`, must be exactly what it prints.
// Not run, each for the reason in NOT_RUN: `npm test` (it is the command running this test).
// Blocks with `docker` or `kind` lines need a Docker engine (and kind), and `kubectl` lines a
// cluster: skipped, with the reason, when `docker info` (or `kubectl cluster-info`) fails.
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type RedisServer, startRedis } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { type Block, readmeBlocks } from './lib/readme-blocks.js';
import { describeRun, type RunResult, root, run } from './lib/workspace.js';

const SHELL = new Set(['sh', 'console']);
const blocks = readmeBlocks.filter((block) => SHELL.has(block.lang));

/** Commands a block may show but the test does not run, with the reason. */
const NOT_RUN = new Map([['npm test', 'it is the command that runs this test']]);

/** A command that keeps running and serves HTTP until stopped. */
const SERVER = /^(?:[A-Z_]+=\S*\s+)*(?:ids-server|node examples\/id-server\/index\.mjs)(?:\s|$)(?!.*--help)/;

const where = (block: Block) => `${block.readme}:${block.line}`;
const isInstalling = (block: Block) => block.words.includes('repo') && /^npm run pack\b/m.test(block.code);

const scratch = tempDir('readme-shell');
const checkout = join(scratch, 'ids');
const project = join(scratch, 'your-project');
const claims = join(scratch, 'claims');

/** Whether a Docker engine answers, and if not why (the machine may have only the client). */
const docker = (() => {
  const info = spawnSync('docker', ['info'], { encoding: 'utf8', timeout: 20_000 });
  if (info.error) return `no docker command (${info.error.message})`;
  if (info.status !== 0) return `no Docker engine: docker info exited ${info.status}`;
  return undefined;
})();
const hasKind = spawnSync('kind', ['version'], { encoding: 'utf8' }).status === 0;
/** Whether kubectl reaches a cluster, and if not why (these machines have none). */
const cluster = (() => {
  const info = spawnSync('kubectl', ['cluster-info'], { encoding: 'utf8', timeout: 20_000 });
  if (info.error) return `no kubectl command (${info.error.message})`;
  if (info.status !== 0) return `no Kubernetes cluster: kubectl cluster-info exited ${info.status}`;
  return undefined;
})();

function skipReason(block: Block): string | undefined {
  const lines = commands(block);
  if (lines.some((line) => /^(docker|kind)\s/.test(line)) && docker) return docker;
  if (lines.some((line) => /^kind\s/.test(line)) && !hasKind) return 'no kind command';
  if (lines.some((line) => /^kubectl\s/.test(line)) && cluster) return cluster;
  return undefined;
}

/** The block's commands: continuation lines joined, blank and comment-only lines dropped. */
function commands(block: Block): string[] {
  const source =
    block.lang === 'console'
      ? block.code
          .split('\n')
          .filter((line) => line.startsWith('$ '))
          .map((line) => line.slice(2))
      : block.code.replace(/\\\n\s*/g, ' ').split('\n');
  return source.map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
}

/** A command without its trailing `# comment` (no README command has a # inside quotes). */
const withoutComment = (line: string) => line.replace(/\s+#.*$/, '');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const PORT_FORMS = [/((?:localhost|127\.0\.0\.1):)(\d{2,5})\b/g, /(--port[= ])(\d+)/g, /(\bPORT=)(\d+)/g];

/** Each port the block names (and ids-server's default, 8080), swapped for a free one. */
async function portsOf(code: string): Promise<Map<string, string>> {
  const named = new Set(['8080']);
  for (const form of PORT_FORMS) for (const match of code.matchAll(form)) named.add(match[2]!);
  const map = new Map<string, string>();
  for (const port of named) map.set(port, String(await freePort()));
  return map;
}

function withPorts(line: string, ports: Map<string, string>): string {
  return PORT_FORMS.reduce(
    (text, form) => text.replace(form, (_m, lead, port) => `${lead}${ports.get(port) ?? port}`),
    line,
  );
}

// Functions the block's script calls around a server line. The server's own output goes to the
// test's stderr capture, so a failure shows it.
const PRELUDE = `set -e -o pipefail
set +h
curl() { command curl --fail-with-body -sS "$@"; }
__pid=
__stop() {
  [ -n "$__pid" ] || return 0
  kill -TERM "$__pid" 2>/dev/null || true
  local status=0
  wait "$__pid" || status=$?
  __pid=
  if [ "$status" -ne 0 ]; then echo "[readme test] the server exited $status on SIGTERM" >&2; return 1; fi
  echo "[readme test] the server stopped on SIGTERM" >&2
}
__serve() {
  __stop
  local port=$1
  shift
  eval "$1 >&2 &"
  __pid=$!
  for _ in $(seq 1 300); do
    if command curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$port/health/ready"; then
      echo "[readme test] ready on port $port: $1" >&2
      return 0
    fi
    if ! kill -0 "$__pid" 2>/dev/null; then
      local status=0
      wait "$__pid" || status=$?
      __pid=
      echo "[readme test] exited $status before it was ready: $1" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "[readme test] not ready within 30 s: $1" >&2
  return 1
}
trap 'if [ -n "$__pid" ]; then kill -KILL "$__pid" 2>/dev/null; fi' EXIT
trap 'echo "[readme test] failed: $BASH_COMMAND" >&2' ERR
`;

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** The bash script for one command line, with servers, ports and NOT_RUN applied. */
function scriptLine(line: string, ports: Map<string, string>): string {
  const command = withoutComment(line);
  const reason = NOT_RUN.get(command);
  if (reason !== undefined) return `echo ${quote(`[readme test] not run: ${command} (${reason})`)} >&2`;
  const swapped = withPorts(command, ports);
  if (!SERVER.test(command)) return swapped;
  const port =
    /--port[= ](\d+)/.exec(swapped)?.[1] ?? /\bPORT=(\d+)/.exec(swapped)?.[1] ?? ports.get('8080')!;
  return `__serve ${port} ${quote(swapped)}`;
}

const dirOf = (block: Block, i: number) =>
  block.words.includes('repo')
    ? checkout
    : block.words.includes('installed')
      ? project
      : join(scratch, `block-${i}`);

let redis: RedisServer | undefined;

async function runBlock(block: Block, i: number): Promise<RunResult[]> {
  const cwd = dirOf(block, i);
  mkdirSync(cwd, { recursive: true });
  const ports = await portsOf(block.code);
  if (/redis:\/\/127\.0\.0\.1:6379/.test(block.code)) {
    redis ??= await startRedis({ allowExternal: false });
    ports.set('6379', new URL(redis.url).port);
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // bash keeps the path as typed (the checkout is a link), so `cd ../your-project` lands beside it.
    PWD: cwd,
    PATH: `node_modules/.bin:${process.env.PATH}`,
    PORT: ports.get('8080'),
    IDS_CLAIM_DIR: claims,
    // Nothing routes by readiness here: stop at once instead of after the 5 s drain.
    IDS_DRAIN_MS: '0',
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    npm_config_loglevel: 'error',
    // See packaging.test.ts: fail in seconds on an unreachable registry; the minimum must not
    // exceed the maximum.
    npm_config_fetch_retries: '1',
    npm_config_fetch_retry_mintimeout: '1000',
    npm_config_fetch_retry_maxtimeout: '5000',
  };
  // As on a fresh machine: no machine ID chosen, the misuse guard at its default.
  delete env.IDS_MACHINE_ID;
  delete env.IDS_SAME_MACHINE_ID;
  const bash = (script: string) =>
    run('bash', ['-c', `${PRELUDE}${script}\n__stop\n`], { cwd, env, timeoutMs: 420_000 });
  if (block.lang === 'console') {
    const results: RunResult[] = [];
    for (const command of commands(block)) results.push(await bash(scriptLine(command, ports)));
    return results;
  }
  return [
    await bash(
      commands(block)
        .map((line) => scriptLine(line, ports))
        .join('\n'),
    ),
  ];
}

/** A console block's commands with the output shown under each (undefined when none is shown). */
function expectedOutputs(block: Block): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  const lines = block.code.replace(/\n$/, '').split('\n');
  lines.forEach((line, i) => {
    if (!line.startsWith('$ ')) return;
    const shown: string[] = [];
    for (let j = i + 1; j < lines.length && !lines[j]!.startsWith('$ '); j++) shown.push(lines[j]!);
    out.push(shown.length > 0 ? `${shown.join('\n')}\n` : undefined);
  });
  return out;
}

const installing = blocks.filter(isInstalling);
let installed: RunResult | undefined;

beforeAll(async () => {
  symlinkSync(root, checkout, 'dir');
  mkdirSync(project, { recursive: true });
  if (installing.length === 1) [installed] = await runBlock(installing[0]!, -1);
}, 600_000);

afterAll(async () => {
  await redis?.close();
});

it('finds the shell blocks: the root README installs first, the server quick start among them', () => {
  expect(installing.map(where)).toEqual([expect.stringMatching(/^README\.md:\d+$/)]);
  expect(blocks.some((b) => b.readme === 'packages/server/README.md' && /^ids-server\b/m.test(b.code))).toBe(
    true,
  );
  expect(blocks.length).toBeGreaterThan(15);
});

it('rewrites the ports a block names and starts servers in the background', () => {
  const ports = new Map([
    ['8080', '41000'],
    ['9000', '41001'],
  ]);
  expect(scriptLine('curl localhost:8080/id   # {"id":"1"}', ports)).toBe('curl localhost:41000/id');
  expect(scriptLine('ids-server --machines 4 --port 9000', ports)).toBe(
    "__serve 41001 'ids-server --machines 4 --port 41001'",
  );
  expect(scriptLine('ids-server', ports)).toBe("__serve 41000 'ids-server'");
  expect(scriptLine('ids-server --help', ports)).toBe('ids-server --help');
  expect(scriptLine('npm test    # everything', ports)).toMatch(/^echo .*not run: npm test/);
});

describe('the root README: npm run pack, then npm install ../ids/packed/*.tgz in ../your-project', () => {
  it('exits 0 and installs the CLI and the server', () => {
    expect(installed, 'the Installing block ran').toBeDefined();
    expect(installed!.status, describeRun(where(installing[0]!), installed!)).toBe(0);
    const bin = spawnSync('ls', [join(project, 'node_modules', '.bin')], { encoding: 'utf8' }).stdout;
    expect(bin.split('\n')).toEqual(expect.arrayContaining(['ids', 'ids-server']));
  });
});

describe.each(
  blocks
    .map((block, i) => [block, i] as const)
    .filter(([block]) => !isInstalling(block))
    .map(([block, i]) => [`${where(block)} (${[block.lang, ...block.words].join(' ')})`, block, i] as const),
)('%s', (_name, block, i) => {
  const reason = skipReason(block);
  it.skipIf(reason !== undefined)(
    reason === undefined
      ? 'runs every command, in order'
      : `runs every command, in order (skipped: ${reason})`,
    async () => {
      if (!block.words.includes('repo'))
        expect(installed?.status, 'the root README Installing block ran first').toBe(0);
      const results = await runBlock(block, i);
      const expected = block.lang === 'console' ? expectedOutputs(block) : [];
      results.forEach((result, n) => {
        expect(result.status, describeRun(where(block), result)).toBe(0);
        if (expected[n] !== undefined) expect(result.stdout).toBe(expected[n]);
      });
    },
    600_000,
  );
});
