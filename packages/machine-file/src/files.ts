import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FileWriteError } from './errors.js';
import type { Identity, ProcessTable } from './process.js';

/** An open file of the asynchronous API: what the claim's periodic record writes through. */
export interface AsyncFile {
  /** Writes the whole text (UTF-8) to the file. */
  writeFile(data: string): Promise<void>;
  /** fsync: resolves once the data is on disk. */
  sync(): Promise<void>;
  /** Closes the file; called after a failure too. */
  close(): Promise<void>;
}

/**
 * The file operations this package uses, as a seam: tests pass node:fs with a fault injected
 * (a full disk, an unwritable directory). Claims and kept files use the synchronous calls (they
 * run once, and at process exit nothing else can); the periodic record of a held claim writes
 * its temporary file through `open`, so fsync never blocks the event loop.
 */
export interface FileSystem {
  /** As fs.readFileSync; an error with code ENOENT means the file is not there. */
  readFileSync(path: string, encoding: 'utf8'): string;
  /** As fs.openSync: 'wx' for a new temporary file (fails if it exists), 'r' for a directory to fsync. */
  openSync(path: string, flags: string, mode?: number): number;
  /** As fs.writeSync: returns how many bytes it wrote (a short write is retried). */
  writeSync(fd: number, data: Uint8Array, offset: number, length: number): number;
  /** As fs.fsyncSync: a file's data, or a directory's entries after a rename or link. */
  fsyncSync(fd: number): void;
  /** As fs.closeSync. */
  closeSync(fd: number): void;
  /** As fs.linkSync: puts a kept file into place, failing with EEXIST rather than replacing another's. */
  linkSync(existingPath: string, newPath: string): void;
  /** As fs.renameSync: replaces a claim file atomically. */
  renameSync(oldPath: string, newPath: string): void;
  /** As fs.unlinkSync. */
  unlinkSync(path: string): void;
  /** As fs.mkdirSync without `recursive`: one level, EEXIST when it exists, ENOENT when its parent is missing. */
  mkdirSync(path: string): unknown;
  /** As fs.readdirSync: the names in a directory. */
  readdirSync(path: string): string[];
  /** As fs.promises.open: how a held claim's periodic record writes its temporary file. */
  open(path: string, flags: string, mode?: number): Promise<AsyncFile>;
}

/** node:fs. */
export const nodeFileSystem: FileSystem = Object.freeze({
  readFileSync: (path: string, encoding: 'utf8') => fs.readFileSync(path, encoding),
  openSync: (path: string, flags: string, mode?: number) => fs.openSync(path, flags, mode),
  writeSync: (fd: number, data: Uint8Array, offset: number, length: number) =>
    fs.writeSync(fd, data, offset, length),
  fsyncSync: (fd: number) => fs.fsyncSync(fd),
  closeSync: (fd: number) => fs.closeSync(fd),
  linkSync: (existingPath: string, newPath: string) => fs.linkSync(existingPath, newPath),
  renameSync: (oldPath: string, newPath: string) => fs.renameSync(oldPath, newPath),
  unlinkSync: (path: string) => fs.unlinkSync(path),
  mkdirSync: (path: string) => fs.mkdirSync(path),
  readdirSync: (path: string) => fs.readdirSync(path),
  open: (path: string, flags: string, mode?: number) => fs.promises.open(path, flags, mode),
});

export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Removes a file if it is there; a file already gone is fine. */
export function unlinkQuiet(files: FileSystem, path: string): void {
  try {
    files.unlinkSync(path);
  } catch {
    // Gone already, or not ours to remove: either way nothing more to do.
  }
}

/**
 * Creates a directory and its missing parents. Node's own `recursive` option loops forever where
 * creating a child keeps failing with ENOENT under an existing parent (under /proc, for one);
 * here each level is tried at most twice, so such a path fails instead.
 */
export function makeDir(files: FileSystem, dir: string): void {
  try {
    files.mkdirSync(dir);
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return;
    const parent = dirname(dir);
    if (errnoOf(error) !== 'ENOENT' || parent === dir) throw error;
    makeDir(files, parent);
    try {
      files.mkdirSync(dir);
    } catch (again) {
      if (errnoOf(again) !== 'EEXIST') throw again;
    }
  }
}

/** Makes a rename or link durable: fsync of the directory. Platforms that cannot fsync a directory skip it. */
export function syncDir(files: FileSystem, dir: string): void {
  let fd: number | undefined;
  try {
    fd = files.openSync(dir, 'r');
    files.fsyncSync(fd);
  } catch {
    // EISDIR/EPERM/EINVAL on platforms without directory fsync; the rename itself is still atomic.
  } finally {
    if (fd !== undefined) files.closeSync(fd);
  }
}

const hostHash = (host: string) => createHash('sha256').update(host).digest('hex').slice(0, 8);

/**
 * A temporary file's name says whose it is (pid, start, host), so that one left by a process
 * that died mid-write can be swept by any later process: `.<label>.<pid>.<start>.<host>.<random>.tmp`.
 */
export function tempPath(target: string, owner: Identity): string {
  const name = [
    basename(target),
    owner.pid,
    owner.start ?? 'x',
    hostHash(owner.host),
    randomBytes(6).toString('hex'),
  ];
  return join(dirname(target), `.${name.join('.')}.tmp`);
}

const TEMP = /^\.(.+)\.(\d+)\.(\d+|x)\.([0-9a-f]{8})\.[0-9a-f]{12}\.tmp$/;

/** Removes the temporary files in `dir` (for targets named `label`) whose writer is gone. Names are unique to their writer, so this cannot race with it. */
export function sweepTemps(
  files: FileSystem,
  dir: string,
  names: readonly string[],
  table: ProcessTable,
  label?: string,
): void {
  const host = hostHash(table.hostname());
  for (const name of names) {
    const match = TEMP.exec(name);
    if (!match || (label !== undefined && match[1] !== label) || match[4] !== host) continue;
    const pid = Number(match[2]);
    const start = match[3] === 'x' ? undefined : match[3];
    const gone = !table.exists(pid) || (start !== undefined && (table.startOf(pid) ?? start) !== start);
    if (gone) unlinkQuiet(files, join(dir, name));
  }
}

/** Writes `content` to a new temporary file beside `target` and fsyncs it. On failure nothing is left behind. */
export function writeTempSync(files: FileSystem, target: string, content: string, owner: Identity): string {
  const temp = tempPath(target, owner);
  let fd: number | undefined;
  try {
    fd = files.openSync(temp, 'wx', 0o644);
    const bytes = Buffer.from(content);
    // Regular files take the whole buffer at once; the loop guards against a short write.
    for (let written = 0; written < bytes.length; ) {
      const n = files.writeSync(fd, bytes, written, bytes.length - written);
      if (!(n > 0)) throw new Error(`wrote ${n} bytes`);
      written += n;
    }
    files.fsyncSync(fd);
    files.closeSync(fd);
    fd = undefined;
    return temp;
  } catch (error) {
    if (fd !== undefined) {
      try {
        files.closeSync(fd);
      } catch {
        // Closing after a failed write: the write's error is the one to report.
      }
    }
    unlinkQuiet(files, temp);
    throw new FileWriteError(`could not write ${target}: ${describe(error)}`, { cause: error });
  }
}

/** The same through the asynchronous API. */
export async function writeTemp(
  files: FileSystem,
  target: string,
  content: string,
  owner: Identity,
): Promise<string> {
  const temp = tempPath(target, owner);
  let file: AsyncFile | undefined;
  try {
    file = await files.open(temp, 'wx', 0o644);
    await file.writeFile(content);
    await file.sync();
    await file.close();
    file = undefined;
    return temp;
  } catch (error) {
    await file?.close().catch(() => undefined);
    unlinkQuiet(files, temp);
    throw new FileWriteError(`could not write ${target}: ${describe(error)}`, { cause: error });
  }
}
