import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemProcesses } from '@ids/machine-file';
import { describe, expect, it } from 'vitest';
import { fixture, listDir, readJson, tempDir } from './helpers.js';

// Real processes racing for claims in one directory: never two owners of one machine ID.
const RACERS = 6;

interface Outcome {
  ok: boolean;
  pid: number;
  machineId?: number;
  tookOver?: { state: string; pid: number } | null;
  name?: string;
  message?: string;
}

async function race(dir: string, minId: number, maxId: number): Promise<Outcome[]> {
  // The racers are lined up by message, not by the clock: all are loaded before any claims, and
  // each holds its outcome until all have one, however busy the machine is.
  const racers = Array.from({ length: RACERS }, () =>
    spawn(process.execPath, [fixture('race-claim.mjs')], {
      env: { ...process.env, CLAIM_DIR: dir, MIN: String(minId), MAX: String(maxId) },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const lines = racers.map((child) => {
    const queue: string[] = [];
    const waiters: ((line: string) => void)[] = [];
    let rest = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) (waiters.shift() ?? ((l) => queue.push(l)))(line);
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const next = (): Promise<string> =>
      queue.length > 0
        ? Promise.resolve(queue.shift() as string)
        : new Promise<string>((resolve, reject) => {
            waiters.push(resolve);
            void exited.then((code) => reject(new Error(`racer exited (${code}): ${stderr}`)));
          });
    return { next, exited, stderr: () => stderr };
  });
  expect(await Promise.all(lines.map((l) => l.next()))).toEqual(Array(RACERS).fill('ready'));
  for (const child of racers) child.stdin.write('go\n');
  const outcomes = await Promise.all(lines.map(async (l) => JSON.parse(await l.next()) as Outcome));
  for (const child of racers) child.stdin.end();
  const codes = await Promise.all(lines.map((l) => l.exited));
  for (const [i, l] of lines.entries()) expect(codes[i], l.stderr()).toBe(0);
  return outcomes;
}

/** A pid that was just used and is gone now. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(child.stdout.trim());
}

function heldBy(pid: number, nonce: string, state: 'held' | 'released' = 'held') {
  return `${JSON.stringify({
    v: 1,
    state,
    pid,
    start: '1',
    host: systemProcesses.hostname(),
    boot: systemProcesses.bootId() ?? null,
    nonce,
    recordedMs: Date.now() - 60_000,
  })}\n`;
}

describe('processes racing for one machine ID', () => {
  const cases: [string, (dir: string) => void][] = [
    ['never claimed', () => undefined],
    [
      'abandoned by a dead pid',
      (dir) => writeFileSync(join(dir, '5.claim'), heldBy(deadPid(), 'a1'.repeat(12))),
    ],
    [
      'released',
      (dir) => writeFileSync(join(dir, '5.claim'), heldBy(deadPid(), 'b2'.repeat(12), 'released')),
    ],
  ];
  for (const [label, prepare] of cases) {
    it(`${RACERS} processes claim ID 5 (${label}): exactly one gets it, the others HeldFileInUseError`, async () => {
      for (let round = 0; round < 2; round++) {
        const dir = tempDir('race');
        prepare(dir);
        const outcomes = await race(dir, 5, 5);
        const winners = outcomes.filter((o) => o.ok);
        expect(winners, JSON.stringify(outcomes)).toHaveLength(1);
        for (const loser of outcomes.filter((o) => !o.ok)) {
          expect(loser.name, loser.message).toBe('HeldFileInUseError');
        }
        // The winners exited normally: the claim is released, and nothing else remains.
        expect(listDir(dir)).toEqual(['5.claim']);
        expect(readJson(join(dir, '5.claim'))).toMatchObject({ state: 'released', pid: winners[0]!.pid });
      }
    });
  }

  it(`${RACERS} processes claim from a range of ${RACERS} at once: all get distinct IDs`, async () => {
    const dir = tempDir('race');
    writeFileSync(join(dir, '0.claim'), heldBy(deadPid(), 'c3'.repeat(12)));
    writeFileSync(join(dir, '2.claim'), heldBy(deadPid(), 'd4'.repeat(12), 'released'));
    const outcomes = await race(dir, 0, RACERS - 1);
    expect(
      outcomes.every((o) => o.ok),
      JSON.stringify(outcomes),
    ).toBe(true);
    expect(outcomes.map((o) => o.machineId).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(listDir(dir)).toEqual(['0.claim', '1.claim', '2.claim', '3.claim', '4.claim', '5.claim']);
  });
});
