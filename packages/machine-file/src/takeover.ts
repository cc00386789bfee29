import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { errorText } from '@ids/engine/internal';
import { ClaimDirError, FileWriteError } from './errors.js';
import { errnoOf, type FileSystem, syncDir, unlinkQuiet, writeTempSync } from './files.js';
import { FOREIGN_CLAIM_GRACE_MS, type Identity, judge, type ProcessTable } from './process.js';
import { type ClaimRecord, formatRecord, readRecord } from './record.js';

/** Everything a claim operation needs: the file system, the process table, who we are, where. */
export interface Context {
  readonly files: FileSystem;
  readonly table: ProcessTable;
  readonly me: Identity;
  readonly dir: string;
  /** The claim's clock: the Unix ms a record of another PID namespace is judged against. */
  readonly now: () => number;
}

export type Taken = {
  readonly taken: true;
  readonly record: ClaimRecord;
  /** The holding replaced, and why it could be. */
  readonly previous?: ClaimRecord;
  readonly why?: string;
};
export type Refused = {
  readonly taken: false;
  readonly why: string;
  /** The live holding that refused (of the file, or of its takeover token); absent when `refuse` declined. */
  readonly holder?: ClaimRecord;
};

// A takeover needs a token, whose own takeover (if its writer died) needs a token, and so on;
// each level needs another process to have died mid-takeover, so a deep chain means something else is wrong.
const MAX_DEPTH = 8;
const MAX_ROUNDS = 32;

export function newNonce(): string {
  return randomBytes(12).toString('hex');
}

/** A token records when it was taken, so that one left by a process of another PID namespace can be judged stale. */
export function tokenRecord(ctx: Context): ClaimRecord {
  return { v: 1, state: 'token', ...ctx.me, nonce: newNonce(), recordedMs: ctx.now() };
}

/** The same holding: a renewal by a live holder changes the record, and then it must be judged again. */
function same(a: ClaimRecord | undefined, b: ClaimRecord): boolean {
  return a?.nonce === b.nonce && a.state === b.state && a.recordedMs === b.recordedMs;
}

/**
 * Makes this process the holder of the file at `path`, or says why not. POSIX has no "replace
 * this file only if it still holds X", so:
 *
 * - A file that does not exist is created with all its content at once: written to a temporary
 *   file, fsynced, then hard-linked into place. `link` fails if the name exists, so of several
 *   processes racing for a fresh ID exactly one wins, and no reader ever sees a half-written file.
 * - A file held by a live process is refused.
 * - A file that is released, or whose holder is gone, is taken over under a token: the file
 *   `<path>~<nonce of the holding being replaced>`, itself taken with this same function. Only
 *   the token's holder may replace that holding, and it checks under the token that the file
 *   still holds it before renaming its own record over it; a process that read the file before
 *   someone else's takeover finds the nonce changed and looks again. The token is removed after.
 *   A token left by a process that died mid-takeover is itself a file whose holder is gone.
 *
 * `make` builds the record to write, given the one replaced. `refuse`, if given, may decline a
 * record that could be taken (saying why), before anything is written.
 */
export function take(
  ctx: Context,
  path: string,
  make: (previous?: ClaimRecord) => ClaimRecord,
  depth = 0,
  refuse?: (current: ClaimRecord) => string | undefined,
): Taken | Refused {
  if (depth > MAX_DEPTH) {
    throw new ClaimDirError(
      `${path}: more than ${MAX_DEPTH} nested takeovers; expected at most a few processes to die while taking a claim over`,
    );
  }
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const current = readRecord(ctx.files, path);
    if (current === undefined) {
      const record = make();
      if (link(ctx, path, record)) return { taken: true, record };
      continue; // Someone created it first: judge theirs.
    }
    let why = `released by pid ${current.pid}`;
    if (current.state !== 'released') {
      const verdict = judge(current, ctx.table, ctx.now());
      if (verdict.alive) {
        return {
          taken: false,
          why: current.state === 'token' ? `being taken over (${verdict.why})` : verdict.why,
          holder: current,
        };
      }
      why = verdict.why;
    }
    const declined = refuse?.(current);
    if (declined !== undefined) return { taken: false, why: declined };
    const token = `${path}~${current.nonce}`;
    const lock = take(ctx, token, () => tokenRecord(ctx), depth + 1);
    if (!lock.taken) {
      return {
        taken: false,
        why: `being taken over by another process (${lock.why})`,
        ...(lock.holder ? { holder: lock.holder } : {}),
      };
    }
    try {
      if (!same(readRecord(ctx.files, path), current)) continue; // Changed meanwhile: look again.
      const record = make(current);
      replace(ctx, path, record);
      return { taken: true, record, previous: current, why };
    } finally {
      unlinkQuiet(ctx.files, token);
    }
  }
  throw new ClaimDirError(
    `${path} changed ${MAX_ROUNDS} times while this process tried to claim it; expected it to settle`,
  );
}

/** Creates `path` with `record` if it does not exist; false if it does. */
function link(ctx: Context, path: string, record: ClaimRecord): boolean {
  const temp = writeTempSync(ctx.files, path, formatRecord(record), ctx.me);
  try {
    ctx.files.linkSync(temp, path);
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    throw new FileWriteError(`could not create ${path}: ${errorText(error)}`, { cause: error });
  } finally {
    unlinkQuiet(ctx.files, temp);
  }
  syncDir(ctx.files, ctx.dir);
  return true;
}

/** Replaces `path` with `record` in one step (temporary file, fsync, rename). Only its holder (or a token holder) may. */
export function replace(ctx: Context, path: string, record: ClaimRecord): void {
  const temp = writeTempSync(ctx.files, path, formatRecord(record), ctx.me);
  try {
    ctx.files.renameSync(temp, path);
  } catch (error) {
    unlinkQuiet(ctx.files, temp);
    throw new FileWriteError(`could not write ${path}: ${errorText(error)}`, { cause: error });
  }
  syncDir(ctx.files, ctx.dir);
}

/**
 * Removes the tokens left by processes that died mid-takeover. A token is removed the only safe
 * way: by taking it over (under its own token) and then removing it as its holder.
 */
export function sweepTokens(ctx: Context, names: readonly string[], onError: (error: unknown) => void): void {
  for (const name of names) {
    if (name.startsWith('.') || !name.includes('~')) continue;
    const path = join(ctx.dir, name);
    try {
      const token = readRecord(ctx.files, path);
      if (token === undefined || judge(token, ctx.table, ctx.now()).alive) continue;
      if (take(ctx, path, () => tokenRecord(ctx), 1).taken) unlinkQuiet(ctx.files, path);
    } catch (error) {
      onError(error);
    }
  }
}

/** What came of putting a renewed record in place (see commitRenewal). */
export type Renewal =
  /** Renewed further meanwhile (by a synchronous verify): the newer record stays. */
  | { readonly kind: 'kept' }
  | { readonly kind: 'written' }
  /** The holder no longer holds the file, or should not trust it: stop, saying `why`. */
  | { readonly kind: 'lost'; readonly why: string; readonly written: boolean }
  | { readonly kind: 'failed'; readonly error: FileWriteError };

/**
 * Puts a renewed record, written to `temp`, in place at `path`, synchronously (a release cannot
 * slip between the check and the rename), if the file still holds the held record of `nonce`
 * and nothing renewed it to `recordedMs` or later meanwhile (`persisted`). `temp` is gone
 * afterwards, whatever the outcome. Shared by host claims and lock files, whose files are alike.
 * `holds` names a record in messages ("claim", "record").
 */
export function commitRenewal(
  ctx: Context,
  path: string,
  temp: string,
  renewal: { readonly nonce: string; readonly recordedMs: number; readonly persisted: number },
  holds: string,
): Renewal {
  let current: ClaimRecord | undefined;
  try {
    current = readRecord(ctx.files, path);
  } catch (error) {
    unlinkQuiet(ctx.files, temp);
    return { kind: 'lost', why: errorText(error), written: false };
  }
  if (current?.nonce !== renewal.nonce || current.state !== 'held') {
    unlinkQuiet(ctx.files, temp);
    const why =
      current === undefined
        ? 'the file was removed'
        : `the file now holds pid ${current.pid}'s ${current.state} ${holds}`;
    return { kind: 'lost', why, written: false };
  }
  if (renewal.recordedMs <= renewal.persisted) {
    unlinkQuiet(ctx.files, temp);
    return { kind: 'kept' };
  }
  const lapsed = current.recordedMs ?? Number.NEGATIVE_INFINITY;
  try {
    ctx.files.renameSync(temp, path);
  } catch (error) {
    unlinkQuiet(ctx.files, temp);
    return {
      kind: 'failed',
      error: new FileWriteError(`could not write ${path}: ${errorText(error)}`, { cause: error }),
    };
  }
  // Renewed so late that a process of another PID namespace may have judged the record
  // abandoned and taken the file between our check and our rename: stop, rather than share.
  const lateMs = ctx.now() - lapsed;
  if (lateMs > FOREIGN_CLAIM_GRACE_MS) {
    return {
      kind: 'lost',
      why: `its record was renewed ${Math.round(lateMs)} ms after it lapsed (more than ${FOREIGN_CLAIM_GRACE_MS} ms: the process was stopped or starved), so another PID namespace may have taken it over`,
      written: true,
    };
  }
  return { kind: 'written' };
}
