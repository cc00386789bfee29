import { defineLayout, IdGenerator, type Layout, type MachineIdClaim, resolveMachineId } from '@ids/engine';
import { Redis } from 'ioredis';
import { type RedisMachineIdClaim, type RedisMachineIdOptions, redisMachineId } from '../src/index.js';

let prefixes = 0;
/** A prefix no other test (or run, against a shared Redis) uses. */
export function freshPrefix(name: string): string {
  return `ids-test:${name}-${process.pid}-${Date.now().toString(36)}-${prefixes++}`;
}

/** A sonyflake-like layout with the given machine bits. */
export function layoutWith(machineBits: number): Layout {
  return defineLayout({
    name: `test-${machineBits}`,
    timeBits: 39,
    timeUnitMs: 10,
    sequenceBits: 8,
    machineBits,
    epochMs: Date.UTC(2014, 8, 1),
  });
}

/** Runs the provider the way Sonyflake.create does (range check included) and returns the claim. */
export async function claim(layout: Layout, options: RedisMachineIdOptions): Promise<RedisMachineIdClaim> {
  return (await resolveMachineId(layout, redisMachineId(options))) as RedisMachineIdClaim;
}

/** A generator whose errors go nowhere (the tests look at what it refuses instead). */
export function generatorOn(layout: Layout, machineId: MachineIdClaim) {
  return new IdGenerator({ layout, machineId, onError: () => undefined });
}

/** A plain client for looking at and meddling with keys, as an operator with redis-cli would. */
export function adminClient(url: string): Redis {
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

/** Resolves when `signal` aborts, with the time it did (performance.now()). */
export function aborted(signal: AbortSignal): Promise<number> {
  if (signal.aborted) return Promise.resolve(performance.now());
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
  );
}

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
