// The periodic renewal of a held file's record (host claims and lock files), and the thread that
// does it. A renewal run by a timer of the holder's own thread waits for that thread's event
// loop: a thread blocked for long (PGlite opening a directory: a minute and more on a loaded
// machine) renewed so late that commitRenewal had to count the file as lost, although its
// process was alive and holding it all along. So the system clock's renewals run on one worker
// thread per process, which a busy main thread does not hold up; a process that is stopped
// (SIGSTOP stops every thread) or starved as a whole still renews late and loses the file, as it
// must. What both threads read and write of a holding lives in a SharedArrayBuffer: the record
// the file holds, the generator's latest tick, a state, and a mutex that puts one renewal or
// release at a time between the check of the file and the rename.
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { errorText } from '@ids/engine/internal';
import { FileWriteError } from './errors.js';
import { unlinkQuiet } from './files.js';
import type { Identity } from './process.js';
import type { ClaimRecord } from './record.js';
import { type Context, commitRenewal, type Renewal } from './takeover.js';

/** The holding is held: renewals go on. */
const HELD = 0;
/** Released (or being released) by its holder: no renewal may write the file any more. */
const DONE = 1;
/** Found lost by a renewal: no renewal may write the file any more. */
const LOST = 2;

// Int32 cells.
const STATE = 0;
const MUTEX = 1;
// Float64 cells, each kept as its bits in a BigInt64 cell so Atomics reads and writes it whole.
const PERSISTED = 1;
const EXACT = 2;
const LATEST_NOW = 3;
const BYTES = 32;

const scratch = new Float64Array(1);
const scratchBits = new BigInt64Array(scratch.buffer);

/**
 * What the threads share of one held file: the record it holds (`persisted`), the last
 * millisecond of the generator's latest tick (`exact`, claims only), the latest clock a renewal
 * read (`latestNow`), whether it is still held, and its mutex.
 */
export class Holding {
  readonly buffer: SharedArrayBuffer;
  readonly #ints: Int32Array;
  readonly #bits: BigInt64Array;

  /** A new holding whose file holds `persisted`, or the one another thread made (its `buffer`). */
  constructor(from: SharedArrayBuffer | { readonly persisted: number; readonly now: number }) {
    this.buffer = from instanceof SharedArrayBuffer ? from : new SharedArrayBuffer(BYTES);
    this.#ints = new Int32Array(this.buffer, 0, 2);
    this.#bits = new BigInt64Array(this.buffer, 8, 3);
    if (from instanceof SharedArrayBuffer) return;
    this.persisted = from.persisted;
    this.exact = Number.NEGATIVE_INFINITY;
    this.#store(LATEST_NOW, from.now);
  }

  get held(): boolean {
    return Atomics.load(this.#ints, STATE) === HELD;
  }
  get lost(): boolean {
    return Atomics.load(this.#ints, STATE) === LOST;
  }

  /** The record the file holds: of the last renewal that reached the disk. */
  get persisted(): number {
    return this.#load(PERSISTED);
  }
  set persisted(value: number) {
    this.#store(PERSISTED, value);
  }
  get exact(): number {
    return this.#load(EXACT);
  }
  set exact(value: number) {
    this.#store(EXACT, value);
  }
  get latestNow(): number {
    return this.#load(LATEST_NOW);
  }

  /**
   * Runs `fn` holding the mutex, so the file's check and rename (or release) of one thread never
   * interleave with another's. It is held only for a few synchronous file calls, so waiting for
   * it (Atomics.wait, on any thread) is short.
   */
  locked<T>(fn: () => T): T {
    // Never left held: `fn` is synchronous and released in `finally`, and the renewal thread is
    // never terminated by this package (Node stops it only after the 'exit' listeners ran).
    while (Atomics.compareExchange(this.#ints, MUTEX, 0, 1) !== 0) Atomics.wait(this.#ints, MUTEX, 1, 100);
    try {
      return fn();
    } finally {
      Atomics.store(this.#ints, MUTEX, 0);
      Atomics.notify(this.#ints, MUTEX);
    }
  }

  /**
   * Marks the holding released, under the mutex, and runs `fn` (the release's write) there; false
   * when it was no longer held (found lost, or released already), and then `fn` does not run.
   */
  finish(fn: () => void): boolean {
    return this.locked(() => {
      if (!this.held) return false;
      Atomics.store(this.#ints, STATE, DONE);
      fn();
      return true;
    });
  }

  /**
   * Marks the holding lost, under the mutex, if it is held and its record is not past `now`: a
   * renewal that could not be written in time. False if it is not (another renewal got through).
   */
  loseIfLapsed(now: number): boolean {
    return this.locked(() => {
      if (!this.held || now < this.persisted) return false;
      Atomics.store(this.#ints, STATE, LOST);
      return true;
    });
  }

  /** The record a renewal at `now` writes: `aheadMs` past the clock, never below what was recorded or the generator's tick. */
  next(now: number, aheadMs: number): number {
    // Both threads renew: a compare-and-exchange, so that the later clock of two is never lost.
    for (let seen = Atomics.load(this.#bits, LATEST_NOW - 1); now > toFloat(seen); ) {
      const found = Atomics.compareExchange(this.#bits, LATEST_NOW - 1, seen, toBits(now));
      if (found === seen) break;
      seen = found;
    }
    return Math.max(this.persisted, this.exact, now + aheadMs);
  }

  /**
   * Puts a renewed record, written to `temp`, in place through commitRenewal, under the mutex,
   * if the holding is still held; undefined (and `temp` removed) when it is not. A renewal that
   * finds the file lost marks the holding LOST before the mutex is let go, so no later renewal
   * of any thread can renew it again; `onLost` runs just before that.
   */
  commit(
    ctx: Context,
    spec: RenewalSpec,
    temp: string,
    recordedMs: number,
    onLost?: (why: string) => void,
  ): Renewal | undefined {
    return this.locked(() => {
      if (!this.held) {
        unlinkQuiet(ctx.files, temp);
        return undefined;
      }
      const renewal = { nonce: spec.mine.nonce, recordedMs, persisted: this.persisted };
      const outcome = commitRenewal(ctx, spec.path, temp, renewal, spec.holds);
      if (outcome.kind === 'written' || (outcome.kind === 'lost' && outcome.written))
        this.persisted = recordedMs;
      if (outcome.kind === 'lost') {
        onLost?.(outcome.why);
        Atomics.store(this.#ints, STATE, LOST);
      }
      return outcome;
    });
  }

  #load(index: number): number {
    return toFloat(Atomics.load(this.#bits, index - 1));
  }
  #store(index: number, value: number): void {
    Atomics.store(this.#bits, index - 1, toBits(value));
  }
}

function toFloat(bits: bigint): number {
  scratchBits[0] = bits;
  return scratch[0] as number;
}

function toBits(value: number): bigint {
  scratch[0] = value;
  return scratchBits[0] as bigint;
}

/** What a renewal needs to know of a held file: plain data, so it passes to the renewal thread. */
export interface RenewalSpec {
  readonly path: string;
  readonly dir: string;
  /** The holder, as its temporary files name it. */
  readonly me: Identity;
  /** The held record; each renewal writes it with a new `recordedMs`. */
  readonly mine: ClaimRecord;
  readonly aheadMs: number;
  readonly intervalMs: number;
  /** Names the record in messages: "claim" or "record". */
  readonly holds: string;
}

/** Messages between the holders' thread and the renewal thread. */
export type ToRenewer =
  | { readonly add: RenewalSpec & { readonly id: number; readonly buffer: SharedArrayBuffer } }
  | { readonly remove: number };
export type FromRenewer =
  | { readonly id: number; readonly lost: string }
  | { readonly id: number; readonly failed: WireError };

/** A FileWriteError as a message carries it: Error subclasses and their fields do not survive structured cloning. */
export interface WireError {
  readonly message: string;
  readonly cause?: { readonly message: string; readonly code?: string; readonly syscall?: string };
}

export function toWire(error: unknown): WireError {
  const e = error as Error;
  const cause = e.cause as NodeJS.ErrnoException | undefined;
  return {
    message: e.message,
    ...(cause instanceof Error
      ? { cause: { message: cause.message, code: cause.code, syscall: cause.syscall } }
      : {}),
  };
}

function fromWire(wire: WireError): FileWriteError {
  const cause =
    wire.cause === undefined
      ? undefined
      : Object.assign(new Error(wire.cause.message), { code: wire.cause.code, syscall: wire.cause.syscall });
  return new FileWriteError(wire.message, cause === undefined ? {} : { cause });
}

/** What the renewals of one holding tell its holder. */
export interface RenewalListener {
  /** The file was found lost (replaced, removed, or renewed too late). */
  lost(why: string): void;
  /** A renewal could not write; the next one tries again. */
  failed(error: unknown): void;
}

/** The periodic renewals of one holding: on the renewal thread, or by a timer of this thread. */
export interface Renewals {
  /** Delivers, synchronously, what the renewal thread reported and this thread has not read yet. */
  deliver(): void;
  stop(): void;
}

/**
 * Starts renewing a holding every `spec.intervalMs`. On the renewal thread when `onThread` (the
 * system clock and node:fs, which that thread uses itself: injected seams stay on this thread),
 * else, and should that thread fail, by a timer of this thread calling `renew` (an asynchronous
 * renewal whose commit goes through `holding.commit` as the thread's does).
 */
export function startRenewals(
  spec: RenewalSpec,
  holding: Holding,
  onThread: boolean,
  renew: () => void,
  listener: RenewalListener,
): Renewals {
  let timer: ReturnType<typeof setInterval> | undefined;
  const onTimer = (): void => {
    timer = setInterval(renew, spec.intervalMs);
    timer.unref();
  };
  let thread: RenewalThread | undefined;
  if (onThread) {
    try {
      thread = renewalThread();
    } catch (error) {
      listener.failed(threadFailure(error)); // Not even started: this holding renews on timers.
    }
  }
  const id = thread?.add(spec, holding, {
    ...listener,
    orphaned(error) {
      listener.failed(error);
      if (holding.held) onTimer();
    },
  });
  if (id === undefined) onTimer();
  return {
    deliver: () => thread?.deliver(),
    stop() {
      clearInterval(timer);
      if (id !== undefined) thread?.remove(id);
    },
  };
}

interface Job extends RenewalListener {
  /** The renewal thread failed: this holding renews on its holder's thread from now on. */
  orphaned(error: unknown): void;
}

/**
 * The built worker, beside the built index in dist/. From src/ (tests run the sources) it is the
 * built one too: `corepack pnpm --filter @ids/machine-file build` after changing the renewal.
 */
const WORKER_URL = new URL('../dist/renewal-worker.js', import.meta.url);

/** The one renewal thread of this process, started with the first holding it renews. */
class RenewalThread {
  readonly #port: MessagePort;
  readonly #jobs = new Map<number, Job>();
  #next = 1;
  #failed: unknown;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    // No execArgv: the process's own (--input-type, -e, a loader) may not apply to a worker.
    const worker = new Worker(WORKER_URL, {
      workerData: { port: port2 },
      transferList: [port2],
      execArgv: [],
    });
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', (code) => this.#fail(new Error(`it exited with code ${code}`)));
    port1.on('message', (message: FromRenewer) => this.#receive(message));
    // Neither keeps the process alive: its exit hook releases what is held.
    worker.unref();
    port1.unref();
  }

  /** Starts renewing a holding; undefined once the thread has failed (the caller renews itself). */
  add(spec: RenewalSpec, holding: Holding, job: Job): number | undefined {
    if (this.#failed !== undefined) {
      job.failed(threadFailure(this.#failed));
      return undefined;
    }
    const id = this.#next++;
    this.#jobs.set(id, job);
    const message: ToRenewer = { add: { ...spec, id, buffer: holding.buffer } };
    this.#port.postMessage(message);
    return id;
  }

  remove(id: number): void {
    if (!this.#jobs.delete(id) || this.#failed !== undefined) return;
    const message: ToRenewer = { remove: id };
    this.#port.postMessage(message);
  }

  /** Reads what the thread posted and this thread's event loop has not delivered yet. */
  deliver(): void {
    for (let m = receiveMessageOnPort(this.#port); m !== undefined; m = receiveMessageOnPort(this.#port)) {
      this.#receive(m.message as FromRenewer);
    }
  }

  #receive(message: FromRenewer): void {
    const job = this.#jobs.get(message.id);
    if (job === undefined) return;
    if ('lost' in message) {
      this.#jobs.delete(message.id);
      job.lost(message.lost);
    } else job.failed(fromWire(message.failed));
  }

  #fail(error: unknown): void {
    if (this.#failed !== undefined) return;
    this.#failed = error;
    this.deliver(); // What it reported before it failed.
    const jobs = [...this.#jobs.values()];
    this.#jobs.clear();
    for (const job of jobs) job.orphaned(threadFailure(error));
  }
}

function threadFailure(error: unknown): FileWriteError {
  return new FileWriteError(
    `the renewal thread of held claim and lock files failed (${errorText(error)}); their records are renewed by timers of the holder's thread instead, which a blocked event loop holds up`,
    { cause: error },
  );
}

let started: RenewalThread | undefined;

function renewalThread(): RenewalThread {
  started ??= new RenewalThread();
  return started;
}
