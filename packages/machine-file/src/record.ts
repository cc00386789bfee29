import { errorText } from '@ids/engine/internal';
import { ClaimDirError, HeldFileCorruptError, shown } from './errors.js';
import { errnoOf, type FileSystem } from './files.js';
import type { Identity } from './process.js';

/** The largest instant a Date holds, in ms either side of 1970. */
const DATE_LIMIT_MS = 8.64e15;

/** What a claim file holds: one JSON object, written whole and renamed into place. */
export interface ClaimRecord extends Identity {
  /** The format's version: 1. A file with another version is refused as corrupt (HeldFileCorruptError). */
  readonly v: 1;
  /**
   * `held` (by the process named), `released` (free; kept for its recorded time), or `token`
   * (a short-lived file that makes one process at a time the one taking a claim over).
   */
  readonly state: 'held' | 'released' | 'token';
  /** Random per holding (16 to 64 hex digits), so a takeover can tell whether the file changed under it. */
  readonly nonce: string;
  /**
   * Unix ms; no ID under this machine ID was issued for a tick after it by the holders so far.
   * A new holder issues none for a tick at or before it. null when nothing was recorded.
   */
  readonly recordedMs: number | null;
}

export function formatRecord(record: ClaimRecord): string {
  return `${JSON.stringify(record)}\n`;
}

function fail(path: string, text: string, expected: string): never {
  const found = `expected ${expected}, found ${shown(text.trim())}`;
  throw new HeldFileCorruptError(
    `${path} is not a claim file: ${found}; remove the file if no process uses its machine ID`,
    path,
    found,
  );
}

/** Parses a claim file's text. @throws HeldFileCorruptError naming the path, what was expected and what was found. */
export function parseRecord(text: string, path: string): ClaimRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    fail(path, text, 'a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, text, 'a JSON object');
  const r = value as Record<string, unknown>;
  if (r.v !== 1) fail(path, text, '"v": 1');
  if (r.state !== 'held' && r.state !== 'released' && r.state !== 'token') {
    fail(path, text, '"state" of "held", "released" or "token"');
  }
  if (typeof r.pid !== 'number' || !Number.isSafeInteger(r.pid) || r.pid <= 0) {
    fail(path, text, '"pid" a positive integer');
  }
  if (r.start !== null && (typeof r.start !== 'string' || !/^\d+$/.test(r.start))) {
    fail(path, text, '"start" a string of digits or null');
  }
  if (typeof r.host !== 'string') fail(path, text, '"host" a string');
  if (r.boot !== null && typeof r.boot !== 'string') fail(path, text, '"boot" a string or null');
  if (typeof r.nonce !== 'string' || !/^[0-9a-f]{16,64}$/.test(r.nonce))
    fail(path, text, '"nonce" hex digits');
  if (r.pidns !== undefined && r.pidns !== null && (typeof r.pidns !== 'string' || !/^\d+$/.test(r.pidns))) {
    fail(path, text, '"pidns" a string of digits or null');
  }
  // Bounded to what a Date holds: every later step (notBefore, describe, the generator) reads it as one.
  if (
    r.recordedMs !== null &&
    (typeof r.recordedMs !== 'number' || !(Math.abs(r.recordedMs) <= DATE_LIMIT_MS))
  ) {
    fail(path, text, `"recordedMs" Unix milliseconds within ±${DATE_LIMIT_MS} (the Date range) or null`);
  }
  return {
    v: 1,
    state: r.state,
    pid: r.pid,
    start: r.start as string | null,
    host: r.host,
    boot: r.boot as string | null,
    pidns: (r.pidns ?? null) as string | null,
    nonce: r.nonce,
    recordedMs: r.recordedMs as number | null,
  };
}

/** What the file system says when the name holds something other than a small regular file. */
const NOT_A_FILE = new Set(['ELOOP', 'EISDIR', 'ERR_IDS_NOT_REGULAR_FILE', 'EFBIG']);

/**
 * Reads a claim file; undefined when there is none. A link, directory, FIFO, device or
 * oversized file at the name is not a claim this package wrote: HeldFileCorruptError, so a range
 * skips that ID. @throws ClaimDirError when it cannot be read (permissions); HeldFileCorruptError.
 */
export function readRecord(files: FileSystem, path: string): ClaimRecord | undefined {
  let text: string;
  try {
    text = files.readFileSync(path, 'utf8');
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT') return undefined;
    if (code !== undefined && NOT_A_FILE.has(code)) {
      throw new HeldFileCorruptError(
        `${path} is not a claim file: ${errorText(error)}; remove it if no process uses its machine ID`,
        path,
        errorText(error),
        { cause: error },
      );
    }
    throw new ClaimDirError(`could not read ${path}: ${errorText(error)}`, { cause: error });
  }
  return parseRecord(text, path);
}
