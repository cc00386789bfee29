// One store at a time on a PGlite directory, enforced by its lock file: real PGlite directories,
// real child processes (test/fixtures/draw.mjs), kill -9 of the holder.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileWriteError, HeldFileCorruptError, HeldFileInUseError } from '@ids/machine-file';
import { afterAll, describe, expect, it } from 'vitest';
import { openSegmentStore, pgliteStore, Segments } from '../src/index.js';
import { draw, scratch, union } from './helpers.js';

const tmp = scratch();
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.remove();
});
let n = 0;
const fresh = (name: string) => join(tmp.dir, `${name}-${n++}`);
const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'ids.lock'), 'utf8'));

/** Creates `tag` as an operator would: open the store, create it, close (which frees the lock). */
async function createTag(store: string, tag: string): Promise<void> {
  const opened = await openSegmentStore(store);
  try {
    await opened.createTag(tag, { after: 0n });
  } finally {
    await opened.close();
  }
}

describe('PGlite directory lock: processes', () => {
  it('a second process is refused naming the holder; after kill -9 of the holder the next one takes over', async () => {
    const dir = fresh('pg');
    const store = `pglite:${dir}`;
    await createTag(store, 'orders');
    // Paced to about one ID per ms: the holder keeps drawing without taking a core.
    const holder = draw({ store, tag: 'orders', paceEvery: 1 }, fresh('ids'));
    children.push(holder.child);
    await holder.started;
    expect(lockOf(dir)).toMatchObject({ state: 'held', pid: holder.child.pid });

    const second = draw({ store, tag: 'orders', count: 10 }, fresh('ids'));
    children.push(second.child);
    const refused = await second.started.then(
      () => 'started',
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/HeldFileInUseError/);
    expect(refused).toMatch(/ERR_IDS_HELD_FILE_IN_USE/);
    expect(refused).toContain(`the PGlite directory ${dir} is in use by pid ${holder.child.pid} on host `);
    await second.done.catch(() => undefined);
    expect(second.child.exitCode).not.toBe(0);

    holder.child.kill('SIGKILL');
    await holder.done.catch(() => undefined);
    expect(holder.child.signalCode).toBe('SIGKILL');
    // The dead holder's lock is still on disk, naming it: nothing released it.
    expect(lockOf(dir)).toMatchObject({ state: 'held', pid: holder.child.pid });

    const next = draw({ store, tag: 'orders', count: 2000 }, fresh('ids'));
    const { ids, report } = await next.done;
    expect(report.count).toBe(2000);
    expect(union([ids]).duplicates).toEqual([]);
    // Closed normally: the lock says released, by the process that took it over.
    expect(lockOf(dir)).toMatchObject({ state: 'released', pid: next.child.pid });
  }, 240_000); // Three PGlite starts, the first creating the database: 20 s and more on a loaded machine.

  it('a process that exits without closing the store releases the lock in its exit hook', () => {
    const dir = fresh('pg');
    const script = `
      const { pgliteStore } = await import('@ids/segment');
      await pgliteStore({ dataDir: ${JSON.stringify(dir)} });
      process.exit(0);`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      cwd: new URL('..', import.meta.url).pathname,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(lockOf(dir)).toMatchObject({ state: 'released', pid: run.pid });
  });
});

describe('PGlite directory lock: one process', () => {
  it('8 concurrent opens of one directory: one store, 7 HeldFileInUseErrors naming this process; open again after close', async () => {
    const dir = fresh('pg');
    const opens = await Promise.allSettled(Array.from({ length: 8 }, () => pgliteStore({ dataDir: dir })));
    const open = opens.filter((o) => o.status === 'fulfilled');
    const refused = opens.filter((o) => o.status === 'rejected').map((o) => o.reason);
    expect(open).toHaveLength(1);
    expect(refused).toHaveLength(7);
    for (const error of refused) {
      expect(error).toBeInstanceOf(HeldFileInUseError);
      expect(error.code).toBe('ERR_IDS_HELD_FILE_IN_USE');
      expect(error.pid).toBe(process.pid);
      expect(error.message).toMatch(/is already open in this process \(pid \d+; lock file .*ids\.lock\)/);
    }
    const store = open[0]!.value;
    await store.createTag('t', { after: 0n });
    const segments = await Segments.create({ store, tag: 't', step: 10 });
    expect(await segments.nextIds(3)).toEqual([1n, 2n, 3n]);
    await segments.close();
    await store.close();
    // The same path spelled differently is the same directory.
    const again = await pgliteStore({ dataDir: `${dir}/./` });
    await expect(pgliteStore({ dataDir: dir })).rejects.toThrow(HeldFileInUseError);
    const after = await Segments.create({ store: again, tag: 't', step: 10 });
    expect(await after.nextId()).toBeGreaterThan(3n); // the data survived: a new database would start at 1
    await after.close();
    await again.close();
  });

  it('garbage in ids.lock is HeldFileCorruptError, before PGlite opens; the file is left for a person to look at', async () => {
    const dir = fresh('pg');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    writeFileSync(join(dir, 'ids.lock'), '\u0000\u0001garbage');
    const error = await pgliteStore({ dataDir: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HeldFileCorruptError);
    expect((error as HeldFileCorruptError).code).toBe('ERR_IDS_HELD_FILE_CORRUPT');
    expect((error as Error).message).toMatch(
      /is not a lock file: expected a JSON object, found "\\u0000\\u0001garbage"/,
    );
    expect(readFileSync(join(dir, 'ids.lock'), 'utf8')).toBe('\u0000\u0001garbage');
  });

  it('a dataDir that cannot be created or written is FileWriteError, not a hang', async () => {
    const file = fresh('file');
    writeFileSync(file, 'not a directory');
    const below = await pgliteStore({ dataDir: join(file, 'db') }).catch((e: unknown) => e);
    expect(below).toBeInstanceOf(FileWriteError);
    expect((below as FileWriteError).code).toBe('ERR_IDS_FILE_WRITE');
    expect((below as Error).message).toMatch(/the PGlite directory .*db cannot be locked: ENOTDIR/);
    const itself = await pgliteStore({ dataDir: file }).catch((e: unknown) => e);
    expect(itself).toBeInstanceOf(FileWriteError);
    expect((itself as Error).message).toMatch(/ENOTDIR/);
  });
});
