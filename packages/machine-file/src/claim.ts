import { join, resolve } from 'node:path';
import { DEFAULT_MAX_CLOCK_BACKWARD_MS, type MachineIdClaim, type MachineIdProvider } from '@ids/engine';
import { checkInteger, errorText } from '@ids/engine/internal';
import { defaultClaimDir } from './dirs.js';
import {
  ClaimDirError,
  ClaimDirUnsafeError,
  HeldFileCorruptError,
  HeldFileInUseError,
  NoFreeMachineIdError,
} from './errors.js';
import { type FileSystem, openDir } from './files.js';
import { checkHeldOptions, HeldFile, type HeldFileOptions, type HeldSettings, heldContext } from './held.js';
import type { ClaimRecord } from './record.js';
import { type Context, newNonce, replace, take } from './takeover.js';

/** Default `recordIntervalMs` of a host claim. */
export const DEFAULT_CLAIM_RECORD_INTERVAL_MS = 500;
/** Default `recordAheadMs` of a host claim: below the generators' default 1000 ms clock-back bound. */
export const DEFAULT_CLAIM_RECORD_AHEAD_MS = 900;

/** How `hostClaim` and `claimHostMachineId` claim; each option is checked when the claim is made. */
export interface HostClaimOptions extends HeldFileOptions {
  /** The directory the processes of this host share. Default: `defaultClaimDir()` (IDS_CLAIM_DIR, else the user's state directory). */
  readonly dir?: string;
  /** The lowest machine ID to claim. Default 0; an integer from 0 to 2^bits - 1, else InvalidArgumentError. */
  readonly min?: number;
  /**
   * The highest machine ID to claim. Default 2^bits - 1; an integer from `min` to 2^bits - 1,
   * else InvalidArgumentError. `min === max` claims exactly that ID (HeldFileInUseError if taken).
   */
  readonly max?: number;
  /**
   * How often, in ms, the claim file's record is renewed (and the generator's tick taken).
   * Default 500; an integer from 10 to 3,600,000 (an hour), else InvalidArgumentError.
   */
  readonly recordIntervalMs?: number;
  /**
   * How far ahead of the clock the record reaches, in ms, so that a holder killed between two
   * records has still recorded past every ID it issued. A successor may wait up to this long
   * after a crash: keep it below the generator's `maxClockBackwardMs` (default 1000), else the
   * successor fails with ClockMovedBackwardsError instead of waiting. Default 900, or
   * `recordIntervalMs` when that is longer; an integer from `recordIntervalMs` to 86,400,000 (a
   * day), else InvalidArgumentError.
   */
  readonly recordAheadMs?: number;
  /**
   * Use a claim directory that other users can write into: one writable by everyone (even with
   * the sticky bit, as /tmp), or owned by another user. Whoever can create files there can make
   * any machine ID look held, or plant claims that hand one ID to two processes, so by default
   * such a directory is refused with ClaimDirUnsafeError. Default false.
   */
  readonly allowSharedDir?: boolean;
}

/** What a claim took over: nothing (a machine ID never claimed in the directory), a released claim, or one whose holder is gone. */
export interface TakenOver {
  /** `released` by its holder, or `abandoned`: its holder is gone (dead, or its pid reused, or from before a reboot). */
  readonly state: 'released' | 'abandoned';
  /** The pid of the process that held it. */
  readonly pid: number;
  /** The last instant that holder recorded (Unix ms), or null if it recorded none. */
  readonly recordedMs: number | null;
}

/**
 * A machine ID held through a file in the claim directory. The generator adopts it (see
 * MachineIdClaim): it starts after `notBefore`, calls `record` with its tick, and `release` on
 * close. Meanwhile the claim renews its record every `recordIntervalMs` to `recordAheadMs` past
 * the clock (on the system clock from a worker thread, see renewal.ts, so a blocked event loop
 * does not hold it up), checking each time that the file is still its own; if it is not,
 * `signal` aborts with HeldFileLostError and the generator stops issuing IDs.
 */
export class HostClaim implements MachineIdClaim {
  /** The ID held: from `min` to `max` of the options that made it. */
  readonly machineId: number;
  /** The claim file. */
  readonly path: string;
  /** The last instant recorded for this machine ID by earlier holders; undefined for a first claim. */
  readonly notBefore: number | undefined;
  /** How far ahead of the clock a holder records (`recordAheadMs`): a successor after `kill -9` waits up to this much more for `notBefore`. */
  readonly notBeforeLeadMs: number;
  /** How often, in ms, the generator records its tick and the claim renews its file (the option, default 500). */
  readonly recordIntervalMs: number;
  /** Aborts with HeldFileLostError once the claim file was found replaced or removed. */
  readonly signal: AbortSignal;
  /** The claim this one replaced, if any. */
  readonly tookOver: TakenOver | undefined;
  readonly #why: string | undefined;
  readonly #mine: ClaimRecord;
  /** The renewals; its holding has the record the file holds (no ID is issued for a time past it, see `verify`). */
  readonly #held: HeldFile;
  /** The most any holder so far has recorded: a release never goes below it. */
  readonly #floor: number;

  /** Built by `hostClaim` and `claimHostMachineId`, not by users. @internal */
  constructor(
    ctx: Context,
    machineId: number,
    path: string,
    mine: ClaimRecord,
    previous: ClaimRecord | undefined,
    previousWhy: string | undefined,
    settings: HeldSettings,
    now: number,
  ) {
    this.machineId = machineId;
    this.path = path;
    this.#mine = mine;
    this.recordIntervalMs = settings.intervalMs;
    this.notBefore = previous?.recordedMs ?? undefined;
    this.notBeforeLeadMs = settings.aheadMs;
    this.tookOver =
      previous === undefined
        ? undefined
        : {
            state: previous.state === 'released' ? 'released' : 'abandoned',
            pid: previous.pid,
            recordedMs: previous.recordedMs,
          };
    this.#why = previousWhy;
    this.#floor = previous?.recordedMs ?? Number.NEGATIVE_INFINITY;
    this.#held = new HeldFile(
      ctx,
      path,
      mine,
      'claim',
      settings,
      now,
      this,
      (why) => `the claim on machine ID ${machineId} was lost: ${why} (${path})`,
    );
    this.signal = this.#held.signal;
  }

  /** One line on how the claim was obtained, for explanations. */
  describe(): string {
    const took =
      this.tookOver === undefined
        ? 'a machine ID not claimed here before'
        : this.tookOver.state === 'released'
          ? `released by pid ${this.tookOver.pid}`
          : `taken over: ${this.#why ?? `pid ${this.tookOver.pid} is gone`}`;
    const since =
      this.notBefore === undefined
        ? ''
        : `; IDs start after ${new Date(this.notBefore).toISOString()}, the time recorded for it`;
    return `claimed ${this.path} (${took}${since})`;
  }

  /** Called by the generator with the last millisecond of the latest tick it used; only ever raises the record. */
  record(timeMs: number): void {
    if (timeMs > this.#held.holding.exact) this.#held.holding.exact = timeMs;
  }

  /**
   * Frees the machine ID: the file becomes `released`, recording the later of the clock now and
   * the generator's last tick (the clock alone if it never went back during the claim, since no
   * ID can be ahead of it). Call it after the last ID is issued; `IdGenerator.close()` does.
   * Returns a Promise when a renewal is under way (it finishes first), else nothing.
   * @throws FileWriteError when the file cannot be written; the claim then stays held by this
   * process until it exits, and is taken over after that like an abandoned one.
   */
  release(): void | Promise<void> {
    const held = this.#held;
    held.settle();
    if (held.done || held.releasing) return held.renewing;
    held.releasing = true;
    if (held.renewing) return held.renewing.then(() => this.#releaseNow());
    this.#releaseNow();
  }

  /** `await using claim = claimHostMachineId()` releases it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  #releaseNow(): void {
    this.#finish(() => {
      const now = this.#held.settings.clock.now();
      const h = this.#held.holding;
      // If the clock went back since the last renewal, IDs may be ahead of it: keep the record ahead.
      const covered = now >= h.latestNow ? now : Math.max(h.persisted, now);
      return Math.max(this.#floor, h.exact, covered);
    });
  }

  /**
   * Releases at process exit, synchronously, keeping the record ahead of the clock: the generator
   * did not close, and other threads may still be issuing. Errors are swallowed (nothing can
   * report them then); the claim is taken over as abandoned once this process is gone.
   * @internal Called by this package's exit hook.
   */
  releaseAtExit(): void {
    if (this.#held.done) return;
    try {
      const h = this.#held.holding;
      this.#finish(() => Math.max(this.#floor, h.exact, h.persisted, this.#held.settings.clock.now()));
    } catch {
      // Nothing can be reported at exit; the claim is taken over as abandoned once this process is gone.
    }
  }

  /** Releases with the record `recordedMs` gives, read under the holding's mutex: no renewal moves it meanwhile. */
  #finish(recordedMs: () => number): void {
    this.#held.stop();
    // Nothing is written when the claim is not ours any more.
    this.#held.holding.finish(() => {
      replace(this.#held.ctx, this.path, { ...this.#mine, state: 'released', recordedMs: recordedMs() });
    });
  }

  /**
   * Renews the record now: `recordAheadMs` past the clock (or the generator's tick, if later),
   * after checking that the file is still this claim's, from this thread. The periodic renewals
   * call it every `recordIntervalMs` when they run on this thread (an injected clock or files).
   * Write errors go to `onError`; a file found replaced or removed aborts `signal` with
   * HeldFileLostError.
   */
  refresh(): Promise<void> {
    return this.#held.renew();
  }

  /**
   * Called by the generator before each ID: when the clock has come within VERIFY_MARGIN_MS of
   * the record the file holds (the periodic renewals fell behind: a starved process, a slow disk),
   * renews it now, synchronously, so no ID is ever issued for a time past the record. A process of
   * another PID namespace judges this claim by that record alone. If the record cannot be renewed
   * and the clock has passed it, the claim is lost (`signal` aborts with HeldFileLostError).
   */
  verify(): void {
    const held = this.#held;
    held.settle();
    if (held.done || held.releasing) return;
    const now = held.settings.clock.now();
    if (now < held.holding.persisted - VERIFY_MARGIN_MS) return;
    const error = held.renewSync(now);
    if (error !== undefined && held.holding.loseIfLapsed(now))
      held.lose(`its record could not be renewed past the clock: ${errorText(error)}`);
  }
}

/** `verify` renews synchronously once the clock is this close to the record (the periodic renewals run every recordIntervalMs). */
const VERIFY_MARGIN_MS = 50;

/**
 * Refuses a directory other users can write into (see `allowSharedDir`): anyone who can create
 * files in it can break the uniqueness of the IDs handed out there.
 */
function checkDirOwner(files: FileSystem, dir: string): void {
  const uid = process.getuid?.();
  let stat: { uid: number; mode: number };
  try {
    stat = files.statSync(dir);
  } catch (error) {
    throw new ClaimDirError(`the claim directory ${dir} cannot be used: ${errorText(error)}`, {
      cause: error,
    });
  }
  const worldWritable = (stat.mode & 0o002) !== 0;
  const foreign = uid !== undefined && stat.uid !== uid;
  if (!worldWritable && !foreign) return;
  const who = worldWritable
    ? `is writable by every user (mode ${(stat.mode & 0o7777).toString(8)})`
    : `is owned by uid ${stat.uid}, not this process's uid ${uid}`;
  throw new ClaimDirUnsafeError(
    `the claim directory ${dir} ${who}: other users could plant or remove claims there and make two processes share a machine ID; expected a directory only this user can write (chmod o-w, or another IDS_CLAIM_DIR), or pass allowSharedDir: true to accept it`,
  );
}

/**
 * A provider of host claims: each call claims the lowest machine ID from `min` to `max` that no
 * live process of this host holds in the claim directory, taking over released claims and those
 * of processes that are gone (a dead pid, or a pid now used by a process started later, or a
 * claim of another PID namespace whose record lapsed). It runs synchronously, so it works with
 * `new Sonyflake()` as well as `Sonyflake.create()`.
 *
 * The IDs are unique among the processes of one host that share the directory; across hosts,
 * use the private IPv4 (@ids/machine-ip) or etcd (@ids/machine-etcd).
 *
 * @throws (from the provider) ClaimDirError (directory unusable), ClaimDirUnsafeError (writable
 * by other users, without `allowSharedDir`), FileWriteError (cannot write: unwritable, disk
 * full), NoFreeMachineIdError (every ID in range held), HeldFileInUseError (`min === max` and
 * that ID is held), HeldFileCorruptError (`min === max` and its file is garbage, a link, a
 * directory or a special file; with a range such an ID is skipped and reported through
 * `onError`). InvalidArgumentError for bad options, when the provider is called.
 */
export function hostClaim(options: HostClaimOptions = {}): MachineIdProvider {
  return ({ bits }) => claimHostMachineId(bits, options);
}

/** What `hostClaim(options)` does when called with `{ bits }`. */
export function claimHostMachineId(bits: number, options: HostClaimOptions = {}): HostClaim {
  checkInteger(bits, 'bits', 0, 30);
  const top = 2 ** bits - 1;
  const min = checkInteger(options.min ?? 0, 'min', 0, top);
  const max = checkInteger(options.max ?? top, 'max', min, top);
  const settings = checkHeldOptions(
    options,
    'recordIntervalMs',
    options.recordIntervalMs ?? DEFAULT_CLAIM_RECORD_INTERVAL_MS,
    DEFAULT_CLAIM_RECORD_AHEAD_MS,
  );
  const { clock, aheadMs, onError, files } = settings;
  const dir = resolve(options.dir ?? defaultClaimDir());
  const names = openDir(
    files,
    dir,
    (error) =>
      new ClaimDirError(
        `the claim directory ${dir} cannot be used: ${errorText(error)}; expected a directory this process can create files in (set IDS_CLAIM_DIR or the dir option)`,
        { cause: error },
      ),
  );
  if (options.allowSharedDir !== true) checkDirOwner(files, dir);
  const ctx = heldContext(settings, dir, names);

  const nonce = newNonce();
  const refused: string[] = [];
  // A record further ahead than a generator waits for (a clock that jumped forward, then back)
  // would make the ID fail with ClockMovedBackwardsError until the clock catches up: such IDs
  // are passed over while another is free, and taken (their record honoured) only if none is.
  const tooFarMs = Math.max(aheadMs, DEFAULT_MAX_CLOCK_BACKWARD_MS);
  let passedOver = false;
  /** The live holding that refused the last ID tried, if one did. */
  let refusedBy: ClaimRecord | undefined;
  const farAhead = (current: ClaimRecord): string | undefined => {
    const aheadBy = (current.recordedMs ?? Number.NEGATIVE_INFINITY) - clock.now();
    if (aheadBy <= tooFarMs) return undefined;
    passedOver = true;
    return `its recorded time is ${Math.round(aheadBy)} ms ahead of the clock (passed over while another ID is free)`;
  };
  const tryId = (id: number, passOver: boolean): HostClaim | string => {
    passedOver = false;
    const path = join(dir, `${id}.claim`);
    const now = clock.now();
    const make = (previous?: ClaimRecord): ClaimRecord => ({
      v: 1,
      state: 'held',
      ...ctx.me,
      nonce,
      // Recorded ahead from the start, so a crash before the first renewal leaves no gap.
      recordedMs: Math.max(previous?.recordedMs ?? Number.NEGATIVE_INFINITY, now + aheadMs),
    });
    let outcome: ReturnType<typeof take>;
    try {
      outcome = take(ctx, path, make, 0, passOver ? farAhead : undefined);
    } catch (error) {
      if (!(error instanceof HeldFileCorruptError) || min === max) throw error;
      onError(error);
      return error.message;
    }
    if (!outcome.taken) {
      refusedBy = outcome.holder;
      return outcome.why;
    }
    try {
      return new HostClaim(ctx, id, path, outcome.record, outcome.previous, outcome.why, settings, now);
    } catch (error) {
      // Taken but not usable: give it back rather than leave it held by nobody.
      const recordedMs = outcome.previous?.recordedMs ?? outcome.record.recordedMs;
      try {
        replace(ctx, path, { ...outcome.record, state: 'released', recordedMs });
      } catch {
        // The claim is then taken over as abandoned once this process is gone.
      }
      throw error;
    }
  };

  const later: number[] = [];
  for (let id = min; id <= max; id++) {
    const result = tryId(id, min !== max);
    if (typeof result !== 'string') return result;
    if (passedOver) later.push(id);
    else refused.push(`${id}: ${result}`);
  }
  for (const id of later) {
    const result = tryId(id, false);
    if (typeof result !== 'string') return result;
    refused.push(`${id}: ${result}`);
  }
  if (min === max) {
    throw new HeldFileInUseError(
      `machine ID ${min} is not free in ${dir}: ${refused[0]?.slice(`${min}: `.length)}; expected no live process of this host to hold it`,
      join(dir, `${min}.claim`),
      refusedBy?.pid ?? 0,
      refusedBy?.host ?? '',
    );
  }
  const shownRefusals = refused.slice(0, 3).join('; ');
  throw new NoFreeMachineIdError(
    `no free machine ID from ${min} to ${max} in ${dir}: all ${refused.length} are held (${shownRefusals}${refused.length > 3 ? '; ...' : ''})`,
  );
}
