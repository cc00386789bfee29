import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Clock,
  checkGeneratorOptions,
  defineLayout,
  FakeClock,
  IdGenerator,
  type MachineIdSource,
  resolveMachineId,
  resolveMachineIdSync,
} from '@ids/engine';
import { tempDirs } from '@ids/test-services';
import {
  type AutoMachineId,
  type AutoMachineIdOptions,
  autoMachineId,
  claimHostMachineId,
  type FileSystem,
  type HostClaimOptions,
  nodeFileSystem,
  type ProcessTable,
} from '../src/index.js';
import type { ClaimRecord } from '../src/record.js';

export const T0 = Date.UTC(2026, 10, 22, 12);

/**
 * The default chain's trail, each step with its outcome, where no ID is given and the host is not
 * in Kubernetes, has no private IPv4 and opts in to nothing (as these machines): it ends on a host
 * claim. The CLI's chain is this one behind its --machine-id step, so its tests check it too.
 */
export const TRAIL_TO_HOST_CLAIM: [step: string, outcome: string][] = [
  ['explicit', 'skipped'],
  ['kubernetes-ordinal', 'skipped'],
  ['ec2', 'skipped'],
  ['private-ip', 'failed'],
  ['ipv6-ula', 'skipped'],
  ['host-claim', 'used'],
];

/** A temporary directory, deleted after the test file. */
export const tempDir: () => string = tempDirs('ids-machine-file-');

/**
 * A process table for tests: `alive` pids exist (with the given start tokens), all others are
 * dead. Host and boot are fixed, so records written under it can be judged by it.
 */
export function fakeTable(
  pid: number,
  alive: Record<number, string> = {},
  host = 'test-host',
  boot = 'boot-1',
): ProcessTable {
  const starts: Record<number, string> = { [pid]: '1000', ...alive };
  return {
    pid,
    exists: (p) => p in starts,
    startOf: (p) => starts[p],
    bootId: () => boot,
    hostname: () => host,
  };
}

export function record(extra: Partial<ClaimRecord> = {}): ClaimRecord {
  return {
    v: 1,
    state: 'held',
    pid: 999,
    start: '1000',
    host: 'test-host',
    boot: 'boot-1',
    nonce: 'ab'.repeat(12),
    recordedMs: T0,
    ...extra,
  };
}

export function writeRecord(dir: string, name: string, r: ClaimRecord): void {
  writeFileSync(join(dir, name), `${JSON.stringify(r)}\n`);
}

export function readRecordAt(dir: string, name: string): ClaimRecord {
  return JSON.parse(readFileSync(join(dir, name), 'utf8'));
}

export function listDir(dir: string): string[] {
  return readdirSync(dir).sort();
}

/** An errno error as node:fs throws them. */
export function errno(code: string, syscall: string, path?: string): NodeJS.ErrnoException {
  const error = new Error(
    `${code}: simulated, ${syscall}${path ? ` '${path}'` : ''}`,
  ) as NodeJS.ErrnoException;
  error.code = code;
  error.syscall = syscall;
  return error;
}

/** node:fs with some calls replaced: the seam where faults are injected. */
export function faultyFs(overrides: Partial<FileSystem>): FileSystem {
  return { ...nodeFileSystem, ...overrides };
}

/** The error `fn` throws; fails the test if it throws nothing. */
export function thrown<T extends Error = Error>(fn: () => unknown): T {
  try {
    fn();
  } catch (error) {
    return error as T;
  }
  throw new Error('expected a throw, but nothing was thrown');
}

/** The machine field these tests claim in unless they say otherwise: 16 bits, Sonyflake's. */
export const BITS = 16;

/** A BITS-bit host claim in `dir` on a fake clock at T0 and a fake process table (pid 100), not released at exit. */
export function claimIn(dir: string, extra: HostClaimOptions = {}) {
  return claimHostMachineId(BITS, {
    dir,
    clock: new FakeClock(T0),
    processes: fakeTable(100),
    releaseOnExit: false,
    ...extra,
  });
}

/**
 * A generator on a host claim in a fresh directory, the two on one fake clock at T0; `claimOf`
 * makes the claim (`claimIn` unless given).
 */
export function claimedGenerator(claimOf: typeof claimIn = claimIn) {
  const dir = tempDir();
  const clock = new FakeClock(T0);
  const claim = claimOf(dir, { clock });
  return { dir, clock, claim, sonyflake: generator({ machineId: claim, clock }) };
}

/** What `generator` builds from: a machine ID (a number, a claim or a provider), and the seams. */
export interface GeneratorSettings {
  readonly machineId: MachineIdSource;
  readonly clock?: Clock;
  /** Bits of the machine field. Default BITS, Sonyflake's 16. */
  readonly machineBits?: number;
}

/**
 * A generator of Sonyflake's default layout, built from the engine as @ids/sonyflake builds it:
 * these tests cannot use @ids/sonyflake itself, which loads this package for `machineId: 'auto'`
 * (a workspace package and its dependency must not depend on each other).
 */
function sonyflakeLike(settings: GeneratorSettings) {
  return defineLayout({
    name: 'sonyflake',
    timeBits: 39,
    timeUnitMs: 10,
    sequenceBits: 8,
    machineBits: settings.machineBits ?? BITS,
    epochMs: Date.UTC(2014, 8, 1),
  });
}

/** `new Sonyflake(settings)`, from the engine: a synchronous provider, a claim or a number. */
export function generator(settings: GeneratorSettings): IdGenerator {
  const layout = sonyflakeLike(settings);
  const machineId = resolveMachineIdSync(layout, settings.machineId);
  return new IdGenerator(
    checkGeneratorOptions({ layout, machineId, ...(settings.clock && { clock: settings.clock }) }),
  );
}

/** `await Sonyflake.create(settings)`, from the engine: the provider may be asynchronous. */
export async function createGenerator(settings: GeneratorSettings): Promise<IdGenerator> {
  const layout = sonyflakeLike(settings);
  const machineId = await resolveMachineId(layout, settings.machineId);
  return new IdGenerator(
    checkGeneratorOptions({ layout, machineId, ...(settings.clock && { clock: settings.clock }) }),
  );
}

/** The `auto` chain's options, with the width a generator would give it (default BITS). */
export type AutoRun = AutoMachineIdOptions & { readonly bits?: number };

/** Runs the `auto` chain as a provider and returns its answer; every step it runs must be synchronous. */
export function runAuto(options: AutoRun = {}): AutoMachineId {
  const { bits = BITS, ...rest } = options;
  let chosen: AutoMachineId | undefined;
  const value = autoMachineId({ ...rest, onChosen: (auto) => (chosen = auto) })({ bits });
  if (value instanceof Promise) throw new Error('a step answered asynchronously: use runAutoAsync');
  return chosen as AutoMachineId;
}

/** Runs the `auto` chain as a provider and resolves with its answer; steps may be asynchronous. */
export async function runAutoAsync(options: AutoRun = {}): Promise<AutoMachineId> {
  const { bits = BITS, ...rest } = options;
  let chosen: AutoMachineId | undefined;
  await autoMachineId({ ...rest, onChosen: (auto) => (chosen = auto) })({ bits });
  return chosen as AutoMachineId;
}
