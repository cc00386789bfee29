// scripts/ensure-services.mjs on a first run: one line per program on the terminal, apt-get's own
// output (hundreds of lines of debconf and dpkg on a fresh machine) in a log file it names. apt-get
// is a fake here, first on PATH: it prints what a real install prints, in volume, and "installs"
// etcd by writing the executable ETCD_BIN names; no package is installed for real.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { describeRun, root, run } from './lib/workspace.js';

const script = join(root, 'scripts', 'ensure-services.mjs');
const isRoot = process.getuid?.() === 0;

/** A folder holding a fake apt-get that prints `lines` lines per call and, if `installs`, makes etcd. */
function fakeApt(dir: string, etcd: string, installs: boolean): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const make = installs ? `printf '#!/bin/sh\\n' > '${etcd}'; chmod +x '${etcd}'` : ':';
  writeFileSync(
    join(bin, 'apt-get'),
    `#!/bin/sh\ni=0\nwhile [ $i -lt 240 ]; do echo "debconf: line $i of $*"; i=$((i+1)); done\necho "adduser: Warning" >&2\ncase "$1" in install) ${make};; esac\nexit 0\n`,
  );
  chmodSync(join(bin, 'apt-get'), 0o755);
  return bin;
}

async function ensure(installs: boolean) {
  const dir = tempDir('ensure');
  const etcd = join(dir, 'etcd');
  const bin = fakeApt(dir, etcd, installs);
  const result = await run(process.execPath, [script, 'redis', 'etcd'], {
    cwd: dir,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ETCD_BIN: etcd, TMPDIR: dir },
  });
  const lines = result.stdout.trimEnd().split('\n');
  const named = /its output: (\S+)\)/.exec(result.stdout)?.[1];
  return { dir, result, lines, named };
}

describe.skipIf(!isRoot)('ensure-services (it installs with apt-get only as root)', () => {
  it('installs what is missing with one line per program, and apt-get output only in the named log', async () => {
    const { dir, result, lines, named } = await ensure(true);
    expect(result.status, describeRun('ensure-services', result)).toBe(0);
    expect(lines).toEqual([
      'redis     present',
      expect.stringMatching(/^apt-get: installing etcd-server \(its output: \S+\)$/),
      "etcd      installed: Debian's etcd-server",
    ]);
    expect(result.stderr).toBe('');
    expect(named?.startsWith(dir)).toBe(true);
    const log = readFileSync(named!, 'utf8');
    // update and install: 240 lines each, with what apt-get wrote to stderr.
    expect(log.match(/^debconf: /gm)).toHaveLength(480);
    expect(log).toContain('adduser: Warning');
  });

  it('says what did not install and where the log is, and exits 1', async () => {
    const { result, lines, named } = await ensure(false);
    expect(result.status).toBe(1);
    expect(lines[2]).toBe("etcd      not installed: Debian's etcd-server did not provide it");
    expect(result.stderr).toContain(`its output is in ${named}`);
    expect(result.stderr).toMatch(/ETCD_BIN=\/path\/to\/etcd/);
    expect(existsSync(named!)).toBe(true);
  });
});

it('prints one line per program when everything is present', async () => {
  const result = await run(process.execPath, [script, 'etcd', 'chromium'], {
    cwd: root,
    env: { ...process.env, ETCD_BIN: process.execPath, CHROMIUM_BIN: process.execPath },
  });
  expect(result.status, describeRun('ensure-services', result)).toBe(0);
  expect(result.stdout).toBe('etcd      present\nchromium  present\n');
});
