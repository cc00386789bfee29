// The scaffolding every lease store's tests share (machine-etcd and machine-redis import it by
// path, as they do fake-scheduler.ts): one copy, so the two suites cannot drift apart.
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import {
  type Clock,
  checkGeneratorOptions,
  IdGenerator,
  type Layout,
  type MachineIdClaim,
} from '@ids/engine';
import { afterEach, expect, onTestFinished } from 'vitest';

import { testLayout } from './fixtures/lease-process.mjs';

export { testLayout as layoutWith };

/** The short lease the fault tests run with: a 2 s TTL, fencing 500 ms before it, 1 s requests. */
export const TTL_MS = 2000;
/** How long before the TTL runs out a holder fences (the fenceMarginMs of FAST_LEASE). */
export const MARGIN_MS = 500;
/** Options for a short lease: TTL_MS, MARGIN_MS, and a 1 s request timeout. */
export const FAST_LEASE = { ttlSeconds: TTL_MS / 1000, fenceMarginMs: MARGIN_MS, timeoutMs: 1000 } as const;

let names = 0;
/** `name` made unique to this process and call, for a prefix no other test (or run) uses. */
export function uniqueName(name: string): string {
  return `${name}-${process.pid}-${Date.now().toString(36)}-${names++}`;
}

/**
 * A generator on a held claim, on `clock` (the real one unless given); its errors go to
 * `onError`, or nowhere (tests look at what it refuses).
 */
export function generatorOn(
  layout: Layout,
  machineId: MachineIdClaim,
  extra: { onError?: (e: unknown) => void; clock?: Clock | undefined } = {},
): IdGenerator {
  return new IdGenerator(
    checkGeneratorOptions({
      layout,
      machineId,
      ...(extra.clock ? { clock: extra.clock } : {}),
      onError: extra.onError ?? (() => undefined),
    }),
  );
}

/** Resolves when `signal` aborts, with the time it did (performance.now()). */
export function aborted(signal: AbortSignal): Promise<number> {
  if (signal.aborted) return Promise.resolve(performance.now());
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
  );
}

/**
 * The ceiling for waiting on an event (a process issuing, a server answering): a last resort
 * that only a broken run reaches, generous enough for a machine busy with other work.
 */
export const WAIT_MS = 45_000;

/**
 * Resolves, with performance.now(), when a timer of `ms` set now really runs. On a busy machine
 * timers run late: a bound the product keeps with its own timer (a fence at TTL minus the
 * margin, a request given up after timeoutMs) is checked against this, not against `now + ms`.
 */
export function timerRuns(ms: number): Promise<number> {
  return new Promise((resolve) => setTimeout(() => resolve(performance.now()), ms));
}

/** Resolves after `ms` of wall time. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `fn` every 10 ms until it returns true, failing after `ms`. */
export async function until(fn: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!(await fn())) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** Steps to undo after each test of the file, run last-pushed first; a step that fails is ignored. */
export function cleanupAfterEach(): { push(step: () => Promise<void>): void } {
  let steps: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of steps.reverse()) await step().catch(() => undefined);
    steps = [];
  });
  return { push: (step) => void steps.push(step) };
}

/** One issuer process (a fixture built on fixtures/lease-process.mjs) and what it printed. */
export interface Issuer {
  readonly child: ChildProcess;
  /** Every ID it printed, with the wall time it came back. */
  readonly ids: { id: bigint; at: number }[];
  /**
   * IDs it issued on a claim that had said it was no longer trusted, or dated past the trust
   * deadline the claim gave just before (its `late` lines): any one fails the test.
   */
  readonly late: string[];
  /** Wall time it said it held its claim, once it has. */
  claimedAt: number | undefined;
  /** Wall time it said its first claim attempt was refused (it retries from then on), if it was. */
  waitingAt: number | undefined;
  /** What it wrote to stderr (its refusals while it waits, say), the last 4 KiB. */
  stderr(): string;
  /** SIGTERM, then resolves when it has closed and exited; SIGKILL (and a rejection) after `graceMs` (10 s). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts an issuer of a package's tests (`testDir`/fixtures/`fixture`, by default the store's
 * issuer.mjs) with `args`, from the package's folder. It is stopped when the test that started
 * it finishes, if the test has not.
 */
export function spawnIssuer(
  testDir: string,
  args: readonly (string | number)[],
  lease?: { ttlSeconds: number; fenceMarginMs: number; timeoutMs: number },
  fixture = 'issuer.mjs',
): Issuer {
  const child = spawn(process.execPath, [join(testDir, 'fixtures', fixture), ...args.map(String)], {
    cwd: dirname(testDir),
    stdio: ['ignore', 'pipe', 'pipe'],
    // The issuer's lease timing, over its own defaults (leaseTiming in lease-process.mjs).
    env: lease ? { ...process.env, IDS_TEST_LEASE: JSON.stringify(lease) } : process.env,
  });
  let buffer = '';
  let err = '';
  // 'close', not 'exit': 'exit' can come before the last lines of stdout are read, and a test
  // that compares IDs once the issuer stopped must see every ID it printed.
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const issuer: Issuer = {
    child,
    ids: [],
    late: [],
    claimedAt: undefined,
    waitingAt: undefined,
    stderr: () => err.slice(-4096),
    async stop(graceMs = 10_000) {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      if (child.exitCode !== 0)
        throw new Error(`issuer exited with ${child.exitCode ?? child.signalCode}: ${err}`);
    },
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      const [a, b, c] = line.split(' ');
      if (a === 'claimed') issuer.claimedAt = Number(c);
      else if (a === 'late') issuer.late.push(line);
      else if (a === 'waiting') issuer.waitingAt = Number(b);
      else if (a !== 'closed' && a) issuer.ids.push({ id: BigInt(a), at: Number(b) });
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  // After the file's afterEach steps (a store already closed may make it exit unclean). Every
  // test that runs issuers fails on an ID issued past its claim's deadline, not only on duplicates.
  onTestFinished(async () => {
    await issuer.stop().catch(() => undefined);
    expect(issuer.late, "IDs issued past their claim's trust deadline").toEqual([]);
  });
  return issuer;
}

/** How many IDs the issuers printed more than once, across all of them. */
export function duplicateCount(...issuers: Issuer[]): number {
  const all = issuers.flatMap((issuer) => issuer.ids.map((x) => x.id));
  return all.length - new Set(all).size;
}

/**
 * Two issuers of the one ID in a field: A, issuing, and then B, started beside it and left
 * waiting (the only ID is A's).
 */
export async function holderAndWaiter(start: () => Issuer): Promise<{ a: Issuer; b: Issuer }> {
  const a = start();
  // The first claim of a fresh ID may wait out the unknown past (one TTL).
  await until(() => a.ids.length > 50, WAIT_MS, 'A issuing');
  const b = start();
  // Until B has been refused once it may not even be running yet (Node starting on a busy
  // machine): a test that then restarts or pauses something would race B's start-up, not B.
  await until(() => b.waitingAt !== undefined || b.claimedAt !== undefined, WAIT_MS, 'B refused once');
  expect(b.claimedAt, 'B claimed the ID A holds').toBeUndefined();
  return { a, b };
}

/** The issuers' TTL: long enough that a holder on a busy machine keeps its claim until it is cut off. */
export const HOLDER_TTL_S = 5;

/** How a hand-over test cuts the holder off from the store (see handOver). */
export interface CutOff {
  /** What the figures printed at the end are headed with. */
  readonly label: string;
  /**
   * Cuts A off (a pause, a partition, a store that forgets). What it returns, if anything, is run
   * once B issues: A resumes.
   */
  cut(a: Issuer): Promise<undefined> | undefined | (() => void);
  /** The ceiling for B to claim the ID and issue; WAIT_MS unless set. */
  readonly waitMs?: number;
  /** How long A runs on after B issues (resumed, or cut off still) before both stop: time to err. */
  readonly runOnMs: number;
  /** The store's state, added to the failure when B does not issue in time (why it could not). */
  describe?(): Promise<string>;
}

/** handOver's cut-off unless told another: A SIGSTOPped until B issues, then resumed for 1.5 s. */
const SIGSTOP: CutOff = {
  label: 'SIGSTOP',
  cut(a) {
    a.child.kill('SIGSTOP');
    return () => a.child.kill('SIGCONT');
  },
  runOnMs: 1500,
};

/**
 * The hand-over every lease store must get right, with two issuer processes that `start` starts:
 * A holds the one ID of the field and B waits for it; A is cut off (`how`, a SIGSTOP unless set),
 * B takes the ID once A's lease has ended and issues, and A runs on for a while. A issued nothing
 * from B's first ID on (it fenced before its lease could end), the two issued no ID twice, B's IDs
 * follow A's, and B claimed at least the fence margin after A's last ID.
 */
export async function handOver(start: () => Issuer, how = SIGSTOP): Promise<void> {
  const { a, b } = await holderAndWaiter(start);
  const cutAt = Date.now();
  const resume = await how.cut(a);
  await until(
    () => b.ids.length > 50,
    how.waitMs ?? WAIT_MS,
    `B issuing after A was cut off (${how.label})`,
  ).catch(async (error: Error) => {
    const store = how.describe
      ? await how.describe().catch((e: Error) => `(not described: ${e.message})`)
      : '';
    throw new Error(
      `${error.message}, ${Date.now() - cutAt} ms after the cut; B claimed at ${b.claimedAt ?? 'never'}, issued ${b.ids.length}; B's stderr:\n${b.stderr()}\nA's stderr:\n${a.stderr()}\n${store}`,
    );
  });
  resume?.();
  const runOnFrom = Date.now();
  await sleep(how.runOnMs);
  await Promise.all([a.stop(), b.stop()]);

  const firstB = b.ids[0]!;
  const lastA = a.ids.at(-1)!;
  const aAfterB = a.ids.filter((x) => x.at >= firstB.at);
  expect(aAfterB).toEqual([]);
  // Nothing from A once it runs on, resumed or still cut off (B had issued before then).
  expect(a.ids.filter((x) => x.at >= runOnFrom)).toEqual([]);
  expect(duplicateCount(a, b)).toBe(0);
  expect(lastA.id).toBeLessThan(firstB.id);
  // B holds the ID the margin after A's last ID at least: A fences at its last confirmed renewal
  // + TTL - margin, and B gets the ID no sooner than that renewal + TTL (the store ends A's
  // lease then; a store that forgot it makes B wait one TTL from its claim). Not measured from
  // the cut: a busy A may have renewed well before it.
  expect(b.claimedAt!).toBeGreaterThanOrEqual(lastA.at + MARGIN_MS);
  console.log(
    `${how.label}: A issued ${a.ids.length} IDs, the last ${lastA.at - cutAt} ms after the cut; B claimed ${b.claimedAt! - cutAt} ms after it, issued from ${firstB.at - cutAt} ms on (TTL ${HOLDER_TTL_S * 1000} ms), ${b.ids.length} IDs; A issued ${aAfterB.length} after B's first; duplicates ${duplicateCount(a, b)}`,
  );
}

/**
 * The lease timing of the slow-store fault (issue 33): a 3 s TTL trusted 2.4 s after each
 * confirmed keepalive, with requests allowed 3 s, so that an answer held back 2.6 s still
 * confirms a keepalive but too late to keep the trust.
 */
export const SLOW_STORE_LEASE = { ttlSeconds: 3, fenceMarginMs: 600, timeoutMs: 3000 } as const;

/** How slowStoreFault makes A's store slow, then absent (see there). */
export interface SlowStore {
  /** What the figures printed at the end are headed with. */
  readonly label: string;
  /**
   * The proxy between A and the store (a TcpProxy of @ids/test-services): it holds the store's
   * answers to A back by `ms` (0 ends it), and at the end cuts A off for good (`blackhole`:
   * everything dropped).
   */
  readonly proxy: { delayAnswers(ms: number): void; setMode(mode: 'blackhole'): void };
  /** How long each answer is held back in the slow phase. */
  readonly delayMs: number;
  /** The store stops answering anyone (killed, or SIGSTOPped). */
  down(): Promise<void>;
  /** The store answers again (restarted, or SIGCONTed). */
  up(): Promise<void>;
}

/**
 * The sequence that made a recovered claim issue duplicates on every store (issue 33): A holds
 * the only ID through a proxy; its store's answers are held back past the trust window for 12 s
 * (A fences, and recovers through answers that come too late to trust); answers flow again until
 * A issues; the store goes down for 12 s (a dark window: no keepalive can be confirmed, so A must
 * stop within the TTL); the store comes back and A issues again; then A is cut off while B, on a
 * direct link, claims the ID. A issues nothing in the dark window and nothing from B's first ID
 * on, no ID is issued twice, and neither issuer prints a `late` line (checked for every issuer
 * when its test finishes).
 */
export async function slowStoreFault(
  startA: () => Issuer,
  startB: () => Issuer,
  store: SlowStore,
): Promise<void> {
  const ttlMs = SLOW_STORE_LEASE.ttlSeconds * 1000;
  const a = startA();
  await until(() => a.ids.length > 50, WAIT_MS, 'A issuing');
  store.proxy.delayAnswers(store.delayMs);
  await sleep(12_000);
  store.proxy.delayAnswers(0);
  const answering = Date.now();
  await until(() => a.ids.some((x) => x.at > answering), WAIT_MS, 'A issuing once answers flow again');
  const downAt = Date.now();
  await store.down();
  await sleep(12_000);
  const upAt = Date.now();
  await store.up();
  await until(() => a.ids.some((x) => x.at > upAt), WAIT_MS, 'A issuing once the store is back').catch(
    (error: Error) => {
      throw new Error(`${error.message}; A's stderr:\n${a.stderr()}`);
    },
  );
  const cutAt = Date.now();
  store.proxy.setMode('blackhole');
  const b = startB();
  await until(() => b.ids.length > 50, WAIT_MS, `B issuing after A was cut off (${store.label})`).catch(
    (error: Error) => {
      throw new Error(`${error.message}; B's stderr:\n${b.stderr()}\nA's stderr:\n${a.stderr()}`);
    },
  );
  await sleep(1500);
  const stopAt = Date.now();
  let aClosedMs = 0;
  await Promise.all([
    // A cut off closes through timeouts: a recovery attempt in flight, pending records and the
    // revoke (timeoutMs each), then the client's own close (etcd's gRPC keepalive pings, 6 s).
    // A quiet run takes 2-3 s; a loaded one took over 30 s once on etcd, so the bound here is
    // the ceiling for a hang, and the time is printed.
    a
      .stop(90_000)
      .then(() => {
        aClosedMs = Date.now() - stopAt;
      })
      .catch((e: Error) => Promise.reject(new Error(`A (cut off): ${e.message}`))),
    b.stop().catch((e: Error) => Promise.reject(new Error(`B: ${e.message}`))),
  ]);

  // Ticks at or past the TTL after the store went down: no keepalive sent since can have been
  // confirmed, so A's lease was not trusted there (its deadline is at most TTL - margin on).
  const dark = a.ids.filter((x) => x.at >= downAt + ttlMs && x.at < upAt);
  const firstB = b.ids[0]!;
  const afterB = a.ids.filter((x) => x.at >= firstB.at);
  console.log(
    `${store.label}: A issued ${a.ids.length} IDs (${dark.length} in the dark window), B claimed ${b.claimedAt! - cutAt} ms after the cut and issued ${b.ids.length}; A issued ${afterB.length} after B's first; duplicates ${duplicateCount(a, b)}; late ${a.late.length + b.late.length}; A (cut off) exited ${aClosedMs} ms after SIGTERM`,
  );
  expect(dark, 'IDs A issued in the dark window').toEqual([]);
  expect(afterB, "IDs A issued from B's first ID on").toEqual([]);
  expect(duplicateCount(a, b)).toBe(0);
  expect([...a.late, ...b.late]).toEqual([]);
}
