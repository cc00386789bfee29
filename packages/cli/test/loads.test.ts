// What a run of the built `ids` loads, as Node resolves it (a resolve hook records every
// specifier, worker threads' included): `ids --version` loads none of the command line, and
// `ids generate` with no flags (the default path, auto machine-ID chain) loads only what it
// needs, and starts no renewal thread. test/bench/cli.mjs measures what this saves in CPU.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const bin = join(__dirname, '..', 'bin', 'ids.js');
const hook = join(__dirname, 'fixtures', 'record-loads.mjs');

/** The specifiers `ids args` resolved, in order. */
function loads(args: string[]): string[] {
  const dir = tempDir('loads');
  const file = join(dir, 'loads.txt');
  const { IDS_MACHINE_ID: _ignored, ...env } = process.env;
  const run = spawnSync(process.execPath, ['--import', hook, bin, ...args], {
    env: { ...env, IDS_TEST_LOADS: file, IDS_CLAIM_DIR: join(dir, 'claims') },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return readFileSync(file, 'utf8').trim().split('\n');
}

describe('what a run loads', () => {
  it.each([['--version'], ['-v']])('ids %s loads no @ids package and no command', (flag) => {
    const loaded = loads([flag]);
    expect(loaded.filter((s) => s.startsWith('@ids/') || /^\.\/(run|io)-/.test(s))).toEqual([]);
  });

  it('ids generate loads no other command, no optional package, and starts no renewal thread', () => {
    const loaded = loads(['generate']);
    expect(loaded).toContain('@ids/machine-file');
    const needless = loaded.filter(
      (s) =>
        /renewal-worker/.test(s) ||
        /^(node:)?(child_process|http|net)$/.test(s) ||
        /^(uuid|ulid|@ids\/(lock|inspector|server|segment))(\/|$)/.test(s) ||
        /^\.\/(decompose|compare|lock|inspect|serve|segment|machine-id)-/.test(s),
    );
    // (node:worker_threads itself is imported by @ids/machine-file: starting a thread is what costs.)
    expect(needless).toEqual([]);
  });
});
