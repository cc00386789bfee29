import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errorText } from '@ids/engine/internal';
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
  /**
   * Reads a small regular file (a claim, a token, a kept ID) as text. node:fs's opens it with
   * O_NOFOLLOW | O_NONBLOCK and checks it with fstat, so a link, a FIFO or a device at the name
   * fails at once instead of blocking or reading without end: ENOENT when it is not there, ELOOP
   * for a symbolic link, EISDIR for a directory, ERR_IDS_NOT_REGULAR_FILE for a FIFO, socket or
   * device, EFBIG past MAX_FILE_BYTES.
   */
  readFileSync(path: string, encoding: 'utf8'): string;
  /** As fs.statSync (following links): the claim directory's owner and mode are checked before use. */
  statSync(path: string): {
    /** The owner's user ID. */
    readonly uid: number;
    /** The type and permission bits (as fs.Stats.mode). */
    readonly mode: number;
  };
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

/** The most a claim, token or kept file may hold: a record is a few hundred bytes. */
export const MAX_FILE_BYTES = 4096;

/** An error shaped as node:fs's (a `code`, the `path`), for refusals the system call does not make itself. */
function fileError(code: string, path: string, text: string): NodeJS.ErrnoException {
  const error = new Error(`${code}: ${text}, open '${path}'`) as NodeJS.ErrnoException;
  error.code = code;
  error.path = path;
  error.syscall = 'open';
  return error;
}

function kindOf(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Reads a small regular file without following a link at its name and without blocking: a FIFO
 * would block a plain read for ever, and /dev/zero would read until memory runs out.
 */
export function readSmallFile(path: string): string {
  // O_NOFOLLOW is missing on Windows, where this package judges claims by pid alone anyway.
  const flags = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
  let fd: number;
  try {
    fd = fs.openSync(path, flags);
  } catch (error) {
    if (errnoOf(error) !== 'ELOOP') throw error;
    throw fileError('ELOOP', path, 'a symbolic link, which is not followed; expected a regular file');
  }
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) throw fileError('EISDIR', path, 'a directory; expected a regular file');
    if (!stat.isFile()) {
      throw fileError('ERR_IDS_NOT_REGULAR_FILE', path, `${kindOf(stat)}; expected a regular file`);
    }
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    let length = 0;
    for (let n = 1; n > 0 && length < buffer.length; length += n) {
      n = fs.readSync(fd, buffer, length, buffer.length - length, null);
    }
    if (length > MAX_FILE_BYTES) {
      throw fileError('EFBIG', path, `more than ${MAX_FILE_BYTES} bytes; expected a small file`);
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    fs.closeSync(fd);
  }
}

/** node:fs. */
export const nodeFileSystem: FileSystem = Object.freeze({
  readFileSync: (path: string, _encoding: 'utf8') => readSmallFile(path),
  statSync: (path: string) => fs.statSync(path),
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

/** Creates `dir` if needed and lists it; a failure of either is thrown as the error `fail` makes of it. */
export function openDir(files: FileSystem, dir: string, fail: (error: unknown) => Error): string[] {
  try {
    makeDir(files, dir);
    return files.readdirSync(dir);
  } catch (error) {
    throw fail(error);
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
    throw new FileWriteError(`could not write ${target}: ${errorText(error)}`, { cause: error });
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
    throw new FileWriteError(`could not write ${target}: ${errorText(error)}`, { cause: error });
  }
}
