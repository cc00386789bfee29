// What a host claim (claim.ts) and a lock file (lock.ts) share once the file is theirs: the
// options of its renewals, the sweep of what dead holders left beside it, and the renewals
// themselves (on the renewal thread or this thread's timers, see renewal.ts), with a synchronous
// renewal for `verify` and the loss of the file, which aborts the holder's signal.
import { type Clock, InvalidArgumentError, wallClock } from '@ids/engine';
import { checkInteger, checkOnError, clockOption, received } from '@ids/engine/internal';
import { HeldFileLostError } from './errors.js';
import { atExit, type ReleasedAtExit } from './exit.js';
import { type FileSystem, nodeFileSystem, sweepTemps, writeTemp, writeTempSync } from './files.js';
import { identityOf, type ProcessTable, systemProcesses } from './process.js';
import { type ClaimRecord, formatRecord } from './record.js';
import { Holding, type RenewalSpec, type Renewals, startRenewals } from './renewal.js';
import { type Context, sweepTokens } from './takeover.js';

/**
 * The options a host claim and a lock file share. Each adds its renewal interval (named its own
 * way) and `recordAheadMs`, whose default and meaning differ between them.
 */
export interface HeldFileOptions {
  /**
   * The clock of the records (Unix ms; a claim's is the generator's). Default: the engine's wall
   * clock, whose renewals run on this package's renewal thread; with another clock, or another
   * `files`, they run on timers of the holder's thread, where a blocked event loop holds them up.
   */
  readonly clock?: Clock;
  /** Receives errors of the periodic renewal and of sweeping. Default: a process warning. */
  readonly onError?: (error: unknown) => void;
  /** Release the claim or lock when the process exits normally. Default true. */
  readonly releaseOnExit?: boolean;
  /**
   * Renew on this package's renewal thread (with the wall clock and node:fs), so that a blocked
   * event loop does not hold the renewals up. Default true. False renews from the holder's own
   * timers, and `verify()` renews synchronously before an ID once the record is near: enough for
   * a short-lived process that only issues IDs (the `ids` command), for which starting a worker
   * thread costs more CPU than the rest of the run. A boolean, else InvalidArgumentError.
   */
  readonly renewalThread?: boolean;
  /** File system seam (tests inject faults). Default: node:fs. */
  readonly files?: FileSystem;
  /** Process table seam (tests inject dead or reused pids). Default: the running system's. */
  readonly processes?: ProcessTable;
}

/** Those options checked, with their defaults. */
export interface HeldSettings {
  readonly clock: Clock;
  readonly intervalMs: number;
  readonly aheadMs: number;
  readonly onError: (error: unknown) => void;
  readonly atExit: boolean;
  readonly files: FileSystem;
  readonly table: ProcessTable;
  /** The renewal thread has the system clock and node:fs; injected ones stay on this thread. */
  readonly onThread: boolean;
}

/**
 * Checks the options of a held file: the renewal interval, given as `intervalMs` (the option
 * `intervalName`), from 10 ms to an hour; `recordAheadMs` from the interval to a day, by default
 * `defaultAheadMs` or the interval when that is longer. @throws InvalidArgumentError.
 */
export function checkHeldOptions(
  options: HeldFileOptions & { readonly recordAheadMs?: number },
  intervalName: string,
  intervalMs: number,
  defaultAheadMs: number,
): HeldSettings {
  const clock = clockOption(options.clock);
  const interval = checkInteger(intervalMs, intervalName, 10, 3_600_000);
  const aheadMs = checkInteger(
    options.recordAheadMs ?? Math.max(defaultAheadMs, interval),
    'recordAheadMs',
    interval,
    86_400_000,
  );
  const onError = checkOnError(options.onError);
  const files = options.files ?? nodeFileSystem;
  const thread = options.renewalThread ?? true;
  if (typeof thread !== 'boolean') {
    throw new InvalidArgumentError(`expected true or false, received ${received(thread)}`, {
      option: 'renewalThread',
    });
  }
  return {
    clock,
    intervalMs: interval,
    aheadMs,
    onError,
    atExit: options.releaseOnExit ?? true,
    files,
    table: options.processes ?? systemProcesses,
    onThread: thread && clock === wallClock && files === nodeFileSystem,
  };
}

/**
 * The context of held files in `dir` (whose entries are `names`), once the temporary files and
 * takeover tokens of holders that died there are swept: only those of the file `only`, when
 * given (a lock file in a directory it shares with others).
 */
export function heldContext(settings: HeldSettings, dir: string, names: string[], only?: string): Context {
  const { files, table, clock } = settings;
  const ctx: Context = { files, table, me: identityOf(table), dir, now: () => clock.now() };
  sweepTemps(files, dir, names, table, only);
  const tokens = only === undefined ? names : names.filter((each) => each.startsWith(`${only}~`));
  sweepTokens(ctx, tokens, settings.onError);
  return ctx;
}

/**
 * The renewals of one held file, for its holder (a HostClaim or a FileLock): started when made,
 * every `intervalMs` to `aheadMs` past the clock, each checking that the file still holds `mine`.
 * The first loss stops them and aborts `signal` with a HeldFileLostError, worded by `lostMessage`.
 */
export class HeldFile {
  readonly ctx: Context;
  readonly spec: RenewalSpec;
  readonly settings: HeldSettings;
  /** The record the file holds, the generator's tick, the latest clock renewed at: shared with the renewal thread. */
  readonly holding: Holding;
  readonly signal: AbortSignal;
  /** Set by a holder whose release waits for the renewal under way: no renewal starts meanwhile. */
  releasing = false;
  readonly #owner: ReleasedAtExit;
  readonly #lostMessage: (why: string) => string;
  readonly #abort = new AbortController();
  readonly #renewals: Renewals;
  #renewing: Promise<void> | undefined;
  #done = false;

  constructor(
    ctx: Context,
    path: string,
    mine: ClaimRecord,
    holds: 'claim' | 'record',
    settings: HeldSettings,
    now: number,
    owner: ReleasedAtExit,
    lostMessage: (why: string) => string,
  ) {
    this.ctx = ctx;
    this.settings = settings;
    this.#owner = owner;
    this.#lostMessage = lostMessage;
    this.signal = this.#abort.signal;
    const { aheadMs, intervalMs } = settings;
    this.spec = { path, dir: ctx.dir, me: ctx.me, mine, aheadMs, intervalMs, holds };
    this.holding = new Holding({ persisted: mine.recordedMs ?? Number.NEGATIVE_INFINITY, now });
    this.#renewals = startRenewals(this.spec, this.holding, settings.onThread, () => void this.renew(), {
      lost: (why) => this.lose(why),
      failed: (error) => settings.onError(error),
    });
    if (settings.atExit) atExit.add(owner);
  }

  /** Stopped: released, being released without waiting, or lost. */
  get done(): boolean {
    return this.#done;
  }

  /** The asynchronous renewal under way, if any: a release waits for it, so its temporary file does not outlive the holding. */
  get renewing(): Promise<void> | undefined {
    return this.#renewing;
  }

  /** Renews the record now, from this thread; one renewal at a time. Write errors go to `onError`. */
  renew(): Promise<void> {
    if (this.#done || this.releasing) return Promise.resolve();
    this.#renewing ??= this.#renewAsync().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  /** Renews the record synchronously at `now`; returns the write error (given to `onError` too) when it could not. */
  renewSync(now: number): unknown {
    const recordedMs = this.holding.next(now, this.settings.aheadMs);
    let temp: string;
    try {
      temp = writeTempSync(this.ctx.files, this.spec.path, this.#text(recordedMs), this.ctx.me);
    } catch (error) {
      this.settings.onError(error);
      return error;
    }
    this.#commit(temp, recordedMs);
    return undefined;
  }

  /** Takes in a loss the renewal thread found and this thread's event loop has not delivered yet. */
  settle(): void {
    if (this.#done || !this.holding.lost) return;
    this.#renewals.deliver();
    if (!this.#done) this.lose('a renewal found it lost');
  }

  stop(): void {
    this.#done = true;
    this.#renewals.stop();
    atExit.delete(this.#owner);
  }

  lose(why: string): void {
    if (this.#done) return;
    this.stop();
    this.#abort.abort(new HeldFileLostError(this.#lostMessage(why), this.spec.path));
  }

  #text(recordedMs: number): string {
    return formatRecord({ ...this.spec.mine, recordedMs });
  }

  async #renewAsync(): Promise<void> {
    const recordedMs = this.holding.next(this.settings.clock.now(), this.settings.aheadMs);
    let temp: string;
    try {
      temp = await writeTemp(this.ctx.files, this.spec.path, this.#text(recordedMs), this.ctx.me);
    } catch (error) {
      this.settings.onError(error);
      return;
    }
    this.#commit(temp, recordedMs);
  }

  /**
   * Puts a renewed record in place, synchronously (a release cannot slip between the check and
   * the rename), if the file still holds `mine` and nothing renewed further meanwhile.
   */
  #commit(temp: string, recordedMs: number): void {
    const outcome = this.holding.commit(this.ctx, this.spec, temp, recordedMs);
    if (outcome === undefined)
      this.settle(); // Released here, or found lost by the renewal thread.
    else if (outcome.kind === 'failed') this.settings.onError(outcome.error);
    else if (outcome.kind === 'lost') this.lose(outcome.why);
  }
}
