// An exclusive lock file, for something one process at a time may use (an embedded database's
// directory). It is a claim file under another name: taken, judged and taken over after a crash
// exactly as host claims are (takeover.ts), so a holder killed with -9 frees it at once.
import { basename, dirname, resolve } from 'node:path';
import { InvalidArgumentError } from '@ids/engine';
import { errorText, received } from '@ids/engine/internal';
import { FileWriteError, HeldFileCorruptError, HeldFileInUseError, HeldFileLostError } from './errors.js';
import type { ReleasedAtExit } from './exit.js';
import { openDir } from './files.js';
import { checkHeldOptions, HeldFile, type HeldFileOptions, type HeldSettings, heldContext } from './held.js';
import { type ClaimRecord, readRecord } from './record.js';
import { type Context, newNonce, replace, take } from './takeover.js';

/** Default `renewIntervalMs` of a lock file. */
export const DEFAULT_LOCK_RENEW_INTERVAL_MS = 1000;

/**
 * Default `recordAheadMs` of a lock file: long, so that a holder whose renewals are held up for a
 * long time keeps its lock. On the system clock they run on a thread of their own, which a
 * blocked event loop (PGlite creating a database: 20 s and more on a loaded machine) does not
 * hold up; a process starved as a whole, or an injected clock's renewals on the event loop, are.
 */
export const DEFAULT_LOCK_RECORD_AHEAD_MS = 60_000;

/** How `lockFile` locks. */
export interface FileLockOptions extends HeldFileOptions {
  /** What the lock guards, for messages (e.g. "the PGlite directory /srv/ids"). Default: the lock file's path. */
  readonly what?: string;
  /**
   * How often, in ms, the holder renews the time in its lock file. Default 1000; an integer from
   * 10 to 3,600,000 (an hour), else InvalidArgumentError.
   */
  readonly renewIntervalMs?: number;
  /**
   * How far ahead of the clock, in ms, each renewal records. Only a process of another PID
   * namespace (another container sharing the directory and the host name) judges the lock by
   * this record, since it cannot see the holder's pid: a lock whose record lapsed more than
   * FOREIGN_CLAIM_GRACE_MS ago counts as abandoned there. So a holder may go this long plus the
   * grace without a renewal (starved as a whole; on an injected clock, its event loop blocked) and
   * keep its lock, and a new container waits
   * as long after its predecessor was killed. Default 60,000; an integer from `renewIntervalMs`
   * to 86,400,000 (a day), else InvalidArgumentError.
   */
  readonly recordAheadMs?: number;
}

/**
 * Takes the lock file at `path` (creating its directory if needed) for this process, or throws.
 * A lock file whose holder is gone (a dead pid, a pid now used by a later process, a boot ago, or
 * of another PID namespace with a record lapsed by more than FOREIGN_CLAIM_GRACE_MS) is taken over; one of
 * another host is never judged. A second `lockFile` of the same path in the holding process is
 * refused too: a lock is held once.
 *
 * @throws HeldFileInUseError naming the holder's pid and host; HeldFileCorruptError when the file is
 * not a lock this package wrote (never taken over); FileWriteError when the directory cannot be
 * created or written; InvalidArgumentError for bad options.
 */
export function lockFile(path: string, options: FileLockOptions = {}): FileLock {
  if (typeof path !== 'string' || path === '') {
    throw new InvalidArgumentError(`path: expected a file path, received ${received(path)}`);
  }
  const target = resolve(path);
  const what = options.what ?? target;
  const settings = checkHeldOptions(
    options,
    'renewIntervalMs',
    options.renewIntervalMs ?? DEFAULT_LOCK_RENEW_INTERVAL_MS,
    DEFAULT_LOCK_RECORD_AHEAD_MS,
  );
  const dir = dirname(target);
  const name = basename(target);
  const names = openDir(
    settings.files,
    dir,
    (error) =>
      new FileWriteError(
        `${what} cannot be locked: ${errorText(error)}; expected a directory this process can create files in`,
        { cause: error },
      ),
  );
  // Left by holders that died mid-write or mid-takeover; only this lock's own, in a shared directory.
  const ctx = heldContext(settings, dir, names, name);
  const now = settings.clock.now();
  const mine: ClaimRecord = {
    v: 1,
    state: 'held',
    ...ctx.me,
    nonce: newNonce(),
    recordedMs: now + settings.aheadMs,
  };
  let outcome: ReturnType<typeof take>;
  try {
    outcome = take(ctx, target, () => mine);
  } catch (error) {
    if (!(error instanceof HeldFileCorruptError)) throw error;
    // Worded for a lock: the error found it as a claim file.
    throw new HeldFileCorruptError(
      `${target} is not a lock file: ${error.found}; it is never taken over: remove it once no process has ${what} open`,
      target,
      error.found,
      { cause: error },
    );
  }
  if (!outcome.taken) {
    const holder = outcome.holder;
    if (holder === undefined)
      throw new HeldFileInUseError(`${what} is in use: ${outcome.why}`, target, 0, '');
    const here =
      holder.pid === ctx.me.pid && holder.host === ctx.me.host && (holder.pidns ?? null) === ctx.me.pidns;
    throw new HeldFileInUseError(
      here
        ? `${what} is already open in this process (pid ${holder.pid}; lock file ${target}); expected it open once at a time: use the one already open, or close it first`
        : `${what} is in use by pid ${holder.pid} on host ${holder.host} (${outcome.why}; lock file ${target}); expected no other process to have it open: stop that process, or use another directory`,
      target,
      holder.pid,
      holder.host,
    );
  }
  return new FileLock(ctx, target, what, mine, outcome.previous, settings, now);
}

/**
 * A lock file held by this process (see `lockFile`). It renews its record every `renewIntervalMs`
 * to `recordAheadMs` past the clock, checking each time that the file is still its own; if not,
 * `signal` aborts with HeldFileLostError. On the system clock the renewals run on a worker thread
 * (see renewal.ts), so a blocked event loop (PGlite opening its directory) does not hold them up.
 */
export class FileLock implements ReleasedAtExit {
  /** The lock file. */
  readonly path: string;
  /** The holder this lock replaced, if any. */
  readonly tookOver:
    | {
        /** `released` by its holder, or `abandoned`: its holder is gone. */
        readonly state: 'released' | 'abandoned';
        /** The pid of the process that held it. */
        readonly pid: number;
      }
    | undefined;
  /** Aborts with HeldFileLostError once the file was found replaced or removed. */
  readonly signal: AbortSignal;
  readonly #what: string;
  readonly #held: HeldFile;

  /** Built by `lockFile`, not by users. @internal */
  constructor(
    ctx: Context,
    path: string,
    what: string,
    mine: ClaimRecord,
    previous: ClaimRecord | undefined,
    settings: HeldSettings,
    now: number,
  ) {
    this.path = path;
    this.#what = what;
    this.tookOver =
      previous === undefined
        ? undefined
        : { state: previous.state === 'released' ? 'released' : 'abandoned', pid: previous.pid };
    this.#held = new HeldFile(
      ctx,
      path,
      mine,
      'record',
      settings,
      now,
      this,
      (why) => `${what}: its lock ${path} was lost: ${why}`,
    );
    this.signal = this.#held.signal;
  }

  /**
   * Call before each use of what the lock guards. Throws HeldFileLostError when the lock was lost or
   * released. When the renewals fell behind (the process was stopped or starved) by half of
   * `recordAheadMs`, it renews now, synchronously, so that what it guards is never used on a
   * lock that a process of another PID namespace may have judged abandoned.
   */
  verify(): void {
    const held = this.#held;
    held.settle();
    const now = held.settings.clock.now();
    if (!held.done && held.holding.persisted - now < held.settings.aheadMs / 2) held.renewSync(now);
    if (this.signal.aborted) throw this.signal.reason;
    if (held.done)
      throw new HeldFileLostError(`${this.#what}: its lock ${this.path} was released`, this.path);
  }

  /** Renews the time in the file now, from this thread. Write errors go to `onError`. */
  renew(): Promise<void> {
    return this.#held.renew();
  }

  /**
   * Frees the lock: the file records `released` (and is taken by the next process without
   * judging). Returns a Promise when a renewal of this thread is under way (it finishes first),
   * else nothing.
   * @throws FileWriteError when the file cannot be written; the lock is then taken over once this
   * process is gone.
   */
  release(): void | Promise<void> {
    const held = this.#held;
    held.settle();
    if (held.done) return held.renewing;
    held.stop();
    if (held.renewing) return held.renewing.then(() => this.#releaseNow());
    this.#releaseNow();
  }

  /** `await using lock = lockFile(path)` releases it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /** @internal Called by this package's exit hook; errors are swallowed (nothing can report them then). */
  releaseAtExit(): void {
    if (this.#held.done) return;
    this.#held.stop();
    try {
      this.#releaseNow(); // Without waiting for a renewal under way: nothing runs after 'exit'.
    } catch {
      // The lock is taken over as abandoned once this process is gone.
    }
  }

  #releaseNow(): void {
    const { ctx, spec } = this.#held;
    this.#held.holding.finish(() => {
      // Never overwrite another's holding, should it have been taken without our noticing yet.
      if (readRecord(ctx.files, this.path)?.nonce !== spec.mine.nonce) return;
      replace(ctx, this.path, { ...spec.mine, state: 'released', recordedMs: null });
    });
  }
}
