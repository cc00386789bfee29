import { basename, dirname, resolve } from 'node:path';
import {
  InvalidArgumentError,
  InvalidMachineIdError,
  isClaim,
  type MachineIdCheck,
  type MachineIdClaim,
  type MachineIdProvider,
} from '@ids/engine';
import { acceptMachineId, afterValue, errorText, idOf, received, releaseQuietly } from '@ids/engine/internal';
import {
  FileWriteError,
  KeptFallbackError,
  KeptFileCorruptError,
  KeptFileUnreadableError,
  KeptIdOutOfRangeError,
  shown,
} from './errors.js';
import {
  errnoOf,
  type FileSystem,
  nodeFileSystem,
  openDir,
  sweepTemps,
  syncDir,
  unlinkQuiet,
  writeTempSync,
} from './files.js';
import { identityOf, type ProcessTable, systemProcesses } from './process.js';

/** Where `keptMachineId` keeps the ID, and where it gets one the first time. */
export interface KeptMachineIdOptions {
  /** The file that keeps the machine ID (one decimal integer and a newline). Required. */
  readonly path: string;
  /**
   * Asked for a machine ID when the file does not exist: a provider such as
   * `privateIpMachineId()`, an etcd claim, or any `({ bits }) => id` function (async allowed;
   * the kept provider then returns a Promise, so use `Sonyflake.create`). Required.
   */
  readonly fallback: MachineIdProvider;
  /** Asked about the fallback's ID before it is kept; false keeps nothing (MachineIdRejectedError). Default: none. */
  readonly check?: MachineIdCheck;
  /** File system seam (tests inject faults). Default: node:fs. */
  readonly files?: FileSystem;
  /** Process table seam, for sweeping temporary files of writers that died. Default: the running system's. */
  readonly processes?: ProcessTable;
}

type Value = number | MachineIdClaim;

/**
 * A provider that keeps the machine ID in a file: it reads the file if it exists; otherwise asks
 * `fallback`, checks the ID (range, then `check`) and keeps it, atomically (a temporary file,
 * fsync, then a hard link into place, which fails instead of replacing a file another process
 * kept first; that process's ID is then used). A file that exists is never replaced: unreadable,
 * corrupt, or out of range, it is an error naming the path and what it holds.
 *
 * @throws (from the provider) KeptFileUnreadableError, KeptFileCorruptError, KeptIdOutOfRangeError,
 * KeptFallbackError (the fallback failed; nothing is written), InvalidMachineIdError (the
 * fallback's ID does not fit), MachineIdRejectedError (`check` refused it), FileWriteError (the
 * directory is unwritable or the disk full; nothing is left behind).
 * InvalidArgumentError at once for a missing path or fallback.
 */
export function keptMachineId(options: KeptMachineIdOptions): MachineIdProvider {
  if (typeof options?.path !== 'string' || options.path === '') {
    throw new InvalidArgumentError(`path: expected a file path, received ${received(options?.path)}`);
  }
  if (typeof options.fallback !== 'function') {
    throw new InvalidArgumentError(
      `fallback: expected a machine-ID provider function, received ${received(options.fallback)}`,
    );
  }
  const path = resolve(options.path);
  const files = options.files ?? nodeFileSystem;
  const table = options.processes ?? systemProcesses;
  return ({ bits }) => {
    const max = 2 ** bits - 1;
    const kept = readKept(files, path, max);
    if (kept !== undefined) return kept;
    let fromFallback: Value | Promise<Value>;
    try {
      fromFallback = options.fallback({ bits });
    } catch (error) {
      throw fallbackError(path, error);
    }
    if (fromFallback instanceof Promise) {
      fromFallback = fromFallback.catch((error: unknown) => {
        throw fallbackError(path, error);
      });
    }
    // The engine's steps after a provider (range, then check; a refused claim released), with
    // a range error that says nothing was kept.
    const inRange = (id: unknown) => {
      if (!Number.isInteger(id) || (id as number) < 0 || (id as number) > max) {
        throw new InvalidMachineIdError(
          `the fallback provider gave machine ID ${received(id)}; expected an integer from 0 to ${max}, so nothing was kept`,
        );
      }
    };
    return afterValue(fromFallback, (value) =>
      afterValue(acceptMachineId(value, inRange, options.check, 'maybe'), () =>
        keep(files, table, path, value, max),
      ),
    );
  };
}

function fallbackError(path: string, error: unknown): KeptFallbackError {
  return new KeptFallbackError(
    `${path} does not exist and the fallback provider failed: ${errorText(error)}`,
    {
      cause: error,
    },
  );
}

function readKept(files: FileSystem, path: string, max: number): number | undefined {
  let text: string;
  try {
    text = files.readFileSync(path, 'utf8');
  } catch (error) {
    // ENOTDIR: a parent is a file, so this file cannot exist either; keeping one will say why it cannot be written.
    if (errnoOf(error) === 'ENOENT' || errnoOf(error) === 'ENOTDIR') return undefined;
    throw new KeptFileUnreadableError(`${path} exists but cannot be read: ${errorText(error)}`, {
      cause: error,
    });
  }
  const digits = text.trim();
  if (!/^\d+$/.test(digits)) {
    throw new KeptFileCorruptError(
      `${path} holds ${shown(text)}; expected one decimal machine ID from 0 to ${max}. It is not replaced: fix or remove it`,
    );
  }
  const id = Number(digits);
  if (id > max) {
    throw new KeptIdOutOfRangeError(
      `${path} holds machine ID ${digits.length > 20 ? `${digits.slice(0, 17)}...` : digits}; expected one from 0 to ${max} (${Math.log2(max + 1)} bits). It is not replaced: fix or remove it`,
    );
  }
  return id;
}

function keep(files: FileSystem, table: ProcessTable, path: string, value: Value, max: number): Value {
  const dir = dirname(path);
  const names = openDir(
    files,
    dir,
    (error) => new FileWriteError(`could not write ${path}: ${errorText(error)}`, { cause: error }),
  );
  sweepTemps(files, dir, names, table, basename(path));
  const temp = writeTempSync(files, path, `${idOf(value)}\n`, identityOf(table));
  try {
    files.linkSync(temp, path);
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') {
      throw new FileWriteError(`could not write ${path}: ${errorText(error)}`, { cause: error });
    }
    // Another process kept an ID first: theirs is the kept one.
    const theirs = readKept(files, path, max);
    if (theirs === undefined) {
      throw new FileWriteError(`could not write ${path}: it appeared and vanished meanwhile`, {
        cause: error,
      });
    }
    if (isClaim(value) && value.machineId !== theirs) void releaseQuietly(value);
    return isClaim(value) && value.machineId === theirs ? value : theirs;
  } finally {
    unlinkQuiet(files, temp);
  }
  syncDir(files, dir);
  return value;
}
