// scripts/stress.mjs (npm run test:stress) is not run by `npm test`, but it must still say the
// truth: its exit status, what it prints, and that no busy loop outlives it.
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..');
const script = join(root, 'scripts', 'stress.mjs');
const fixture = (name: string) => join(__dirname, 'fixtures', 'stress', name);
/** A ceiling for one vitest run of a one-test fixture on a busy machine (16 s seen at load 30). */
const RUN_MS = 90_000;

function start(args: string[]): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

async function run(args: string[]): Promise<{ code: number | null; output: string }> {
  const { exit, output } = start(args);
  const code = await exit;
  removeLogs(output());
  return { code, output: output() };
}

/** Deletes the logs a run that did not pass keeps (it prints where). */
function removeLogs(output: string): void {
  const dir = /^logs of every attempt: (.+)$/m.exec(output)?.[1];
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** The busy loops' pids, from the script's first line. */
function loopPids(output: string): number[] {
  const pids = /busy loops \(pids ([\d ]+)\)/.exec(output)?.[1];
  return pids ? pids.split(' ').map(Number) : [];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once none of `pids` is running (SIGKILL is delivered asynchronously). */
async function gone(pids: number[]): Promise<void> {
  const end = performance.now() + RUN_MS;
  while (pids.some(alive)) {
    if (performance.now() > end) throw new Error(`busy loops still running: ${pids.filter(alive).join(' ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('scripts/stress.mjs', () => {
  it('bad arguments: exit status 2, the option and what it expected; --help: 0', async () => {
    for (const [args, message] of [
      [['--loops', 'x'], '--loops: expected an integer from 0 to 1000, received "x"'],
      [['--passes', '0'], '--passes: expected an integer from 1 to 1000, received "0"'],
      [['--passes=3', '--max-attempts=2'], '--max-attempts: expected at least --passes (3), received 2'],
      [['--bogus'], 'unknown option "--bogus"'],
      [['no-such-package'], '"no-such-package": no such package under packages/, nor a folder'],
    ] as const) {
      const { code, output } = await run([...args]);
      expect(code, args.join(' ')).toBe(2);
      expect(output).toContain(message);
      expect(output).toContain('usage: npm run test:stress');
    }
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.output).toContain('--max-attempts');
  });

  it(
    'a suite that passes: exit 0 once it has passed --passes times in a row; the busy loops are gone',
    async () => {
      const { code, output } = await run(['--loops', '2', '--passes', '1', fixture('pass')]);
      expect(output).toMatch(/^attempt 1: PASS in [\d.]+ s \(.*\); load [\d. ]+; 1 in a row$/m);
      expect(output).toContain('stress: passed 1 times in a row after 1 attempts');
      expect(code).toBe(0);
      const pids = loopPids(output);
      expect(pids).toHaveLength(2);
      await gone(pids);
    },
    RUN_MS * 2,
  );

  it(
    'a suite that fails: exit 1 after --max-attempts, naming the failing test each time',
    async () => {
      const { code, output } = await run([
        '--loops',
        '1',
        '--passes',
        '1',
        '--max-attempts',
        '1',
        fixture('fail'),
      ]);
      expect(output).toMatch(/^attempt 1: FAIL in /m);
      expect(output).toContain('suite.check.mjs > fails on purpose: AssertionError: expected 2 to be 3');
      expect(output).toContain('did not pass 1 times in a row within 1 attempts');
      expect(output).toMatch(/^logs of every attempt: /m);
      expect(code).toBe(1);
      await gone(loopPids(output));
    },
    RUN_MS * 2,
  );

  it(
    'interrupted (SIGINT) mid-run: exit 130, and the busy loops and the running suite are stopped',
    async () => {
      const { child, output, exit } = start(['--loops', '2', '--passes', '1000', fixture('pass')]);
      const end = performance.now() + RUN_MS;
      while (loopPids(output()).length === 0) {
        if (performance.now() > end) throw new Error(`no busy loops reported: ${output()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      child.kill('SIGINT');
      expect(await exit).toBe(130);
      removeLogs(output());
      expect(output()).toContain('SIGINT: stopping the busy loops and the running suite');
      expect(output()).toContain('stress: interrupted');
      await gone(loopPids(output()));
    },
    RUN_MS * 2,
  );
});
