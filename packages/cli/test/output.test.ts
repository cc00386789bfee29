// The built `ids` executable when its output fails, and decompose reading stdin as a stream.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAIM_DIR } from './helpers.js';

const bin = join(__dirname, '..', 'bin', 'ids.js');
const { IDS_MACHINE_ID: _ignored, ...userEnv } = process.env;
const env = { ...userEnv, IDS_CLAIM_DIR: CLAIM_DIR, IDS_MACHINE_ID: '1' };

/** Runs `ids args > /dev/full`: every write to stdout fails with ENOSPC. */
function toFullDisk(args: string[]) {
  const full = openSync('/dev/full', 'w');
  try {
    return spawnSync(process.execPath, [bin, ...args], {
      env,
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', full, 'pipe'],
    });
  } finally {
    closeSync(full);
  }
}

describe.skipIf(!existsSync('/dev/full'))('stdout that fails (> /dev/full)', () => {
  // Every command, each of the ways it writes: the one output-error path gives them all the same
  // code and exit status. (generate reported the bare ENOSPC before it wrote through `print`.)
  it.each([
    [['generate', '-n', '3']],
    [['generate', '-n', '100000', '-l', 'twitter']],
    [['generate', '-n', '3', '--json']],
    [['generate', '--scheme', 'uuidv7', '-n', '3']],
    [['decompose', '-l', 'sonyflake', '647484930451832833']],
    [['compare']],
    [['machine-id', '--explain']],
    [['inspect', '--html']],
    [['serve', '--help']],
    [['generate', '--help']],
    [['--help']],
    [['--version']],
  ])('ids %j: one line with ERR_IDS_OUTPUT, exit 1, no stack', (args) => {
    const run = toFullDisk(args);
    const command = args[0]?.startsWith('-') ? '' : ` ${args[0]}`;
    expect(run.signal).toBeNull();
    expect(run.stderr).toMatch(
      new RegExp(`^ids${command}: error ERR_IDS_OUTPUT: could not write the output: ENOSPC`),
    );
    expect(run.status).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('ids decompose reads stdin as a stream', () => {
  it('prints the fields of each ID while stdin is still open, instead of reading it whole first', async () => {
    const child = spawn(process.execPath, [bin, 'decompose'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    const firstRow = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (/machine {3}\d+\n/.test(out)) resolve();
      });
      child.on('exit', (code) => reject(new Error(`exited (${code}) before printing: ${out}`)));
    });
    child.stdin.write('647484930451832833\n');
    // stdin stays open: the row must arrive anyway. (Before streaming, nothing came until EOF.)
    await firstRow;
    expect(out).toMatch(/^id {8}647484930451832833\n/);
    child.stdin.end('647484930451832834 647484930451832835\n');
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(out.match(/^id /gm)).toHaveLength(3);
  }, 30_000);

  it('--json from stdin is still one JSON array, item by item', async () => {
    const run = spawnSync(process.execPath, [bin, 'decompose', '--json'], {
      env,
      encoding: 'utf8',
      input: '647484930451832833\n\n  647484930451832834\t647484930451832835\r\n',
      timeout: 30_000,
    });
    expect(run.status).toBe(0);
    const rows = JSON.parse(run.stdout);
    expect(rows.map((r: { id: string }) => r.id)).toEqual([
      '647484930451832833',
      '647484930451832834',
      '647484930451832835',
    ]);
    expect(run.stdout).toBe(`${JSON.stringify(rows, null, 2)}\n`);
  });
});
