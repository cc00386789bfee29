// What the tests on the in-memory store share: the lease timing they run with, and the check of
// every ID issued against the store's own truth at the instant it was issued.
import {
  checkGeneratorOptions,
  IdGenerator,
  type Layout,
  type MachineIdClaim,
  resolveMachineId,
} from '@ids/engine';
import type { LeasedClaim } from '../src/claim.js';
import { checkLeaseOptions } from '../src/options.js';
import { type LeasedMachineIdProvider, leasedMachineId } from '../src/provider.js';
import { FakeScheduler } from './fake-scheduler.js';
import { type MemoryLeaseClient, MemoryLeaseServer } from './memory-store.js';

export const TTL_S = 3;
export const MARGIN_MS = 600;
export const TIMEOUT_MS = 2000;
/** TTL minus the margin: how long a confirmed keepalive is trusted from its sending. */
export const TRUST_MS = TTL_S * 1000 - MARGIN_MS;
/** The fake time one step of a test's run moves. */
export const STEP_MS = 5;

/** The provider a simulated process claims through: the memory store, the fake scheduler, this timing. */
export function memoryProvider(
  scheduler: FakeScheduler,
  open: () => MemoryLeaseClient,
  options: object = {},
): LeasedMachineIdProvider {
  return leasedMachineId({
    store: 'memory',
    options: { scheduler, onError: () => undefined, ...options } as object,
    lease: checkLeaseOptions({ ttlSeconds: TTL_S, fenceMarginMs: MARGIN_MS, timeoutMs: TIMEOUT_MS }),
    open,
  });
}

/** A simulated process's generator on `claim`, on the fake clock. */
export function simulatedGenerator(
  layout: Layout,
  claim: MachineIdClaim,
  scheduler: FakeScheduler,
): IdGenerator {
  return new IdGenerator(
    checkGeneratorOptions({
      layout,
      machineId: claim,
      clock: scheduler.clock,
      // Several simulated processes share this one: the store, not the guard, keeps them apart.
      sameMachineId: 'allow',
      onError: () => undefined,
    }),
  );
}

/**
 * What is wrong with ID `id`, issued at scheduler time `at` on `machine` by a process talking
 * through `client`: undefined when the store holds the machine ID for a lease granted through
 * that client with at least the fencing margin left, else a line saying what it found.
 */
export function violation(
  server: MemoryLeaseServer,
  client: MemoryLeaseClient | undefined,
  machine: number,
  id: bigint,
  at: number,
  start: number,
): string | undefined {
  const owner = server.owner(machine);
  const mine = owner !== undefined && client?.granted.has(owner);
  const left = owner === undefined ? -1 : server.expiresAt(owner) - at;
  if (mine && left >= MARGIN_MS) return undefined;
  return `ID ${id} at +${at - start} ms: machine ${machine} is ${owner === undefined ? 'held by nobody' : mine ? `ours with ${left} ms left` : `held by ${owner}`}`;
}

/** A simulated process of a test's world: it claims, issues each step, and keeps what it issued. */
export interface Simulated {
  /** Claims what it has no claim for (retrying what was refused). */
  start(): void;
  /** Issues once per generator, each ID checked with `violation`. */
  issue(): void;
  /** What `violation` found. */
  readonly violations: string[];
  /** Every ID issued. */
  issued(): bigint[];
}

/** One in-memory store, the fake scheduler, and the simulated processes that share them. */
export class MemoryWorld<P extends Simulated> {
  readonly scheduler = new FakeScheduler(Date.UTC(2025, 0, 1));
  readonly server = new MemoryLeaseServer(this.scheduler);
  readonly start = this.scheduler.now();
  readonly members: P[] = [];

  /** Adds `member` and lets it claim. */
  add(member: P): P {
    this.members.push(member);
    member.start();
    return member;
  }

  /** Runs `ms` of fake time in small steps; every member without a claim retries, every one with a generator issues. */
  async run(ms: number): Promise<void> {
    for (let t = 0; t < ms; t += STEP_MS) {
      await this.scheduler.advance(STEP_MS);
      for (const member of this.members) {
        member.start();
        member.issue();
      }
    }
  }

  violations(): string[] {
    return this.members.flatMap((member) => member.violations);
  }

  duplicates(): number {
    const all = this.members.flatMap((member) => member.issued());
    return all.length - new Set(all).size;
  }
}

/** One generator of a simulated process: its claim, once made, and what it issued. */
export class SimulatedSlot {
  /** Each ID issued, with the scheduler time and the machine ID it was issued at. */
  readonly ids: { readonly id: bigint; readonly at: number; readonly machine: number }[] = [];
  /** Why each claim attempt failed. */
  readonly refusals: unknown[] = [];
  /** Scheduler times at which a claim of this slot was aborted. */
  readonly abortedAt: number[] = [];
  /** Scheduler times at which the generator refused to issue. */
  readonly refusedAt: number[] = [];
  claim: LeasedClaim | undefined;
  generator: IdGenerator | undefined;
  claiming = false;
}

/**
 * One process in miniature: its own client and provider, and `count` generators, each claiming
 * a machine ID (one lease for all of them with `shareLease`) and issuing one ID a step.
 */
export class SimulatedProcess implements Simulated {
  readonly slots: SimulatedSlot[];
  readonly violations: string[] = [];
  readonly client: MemoryLeaseClient;
  readonly #world: MemoryWorld<SimulatedProcess>;
  readonly #layout: Layout;
  readonly #provider: LeasedMachineIdProvider;
  #stopped = false;

  constructor(
    world: MemoryWorld<SimulatedProcess>,
    layout: Layout,
    count: number,
    options: { readonly shareLease?: boolean; readonly client?: MemoryLeaseClient | undefined } = {},
  ) {
    this.#world = world;
    this.#layout = layout;
    this.client = options.client ?? world.server.client(TIMEOUT_MS);
    this.slots = Array.from({ length: count }, () => new SimulatedSlot());
    const shared = options.shareLease ? { shareLease: true } : {};
    this.#provider = memoryProvider(world.scheduler, () => this.client, shared);
  }

  /** Claims for every slot without a generator (retrying what was refused). */
  start(): void {
    if (this.#stopped) return;
    for (const slot of this.slots) {
      if (slot.claiming || slot.generator) continue;
      slot.claiming = true;
      const { scheduler } = this.#world;
      resolveMachineId(this.#layout, this.#provider).then(
        (claim) => {
          slot.claim = claim as LeasedClaim;
          slot.claim.signal.addEventListener('abort', () => slot.abortedAt.push(scheduler.now()));
          slot.generator = simulatedGenerator(this.#layout, claim as MachineIdClaim, scheduler);
          slot.claiming = false;
        },
        (error: unknown) => {
          slot.refusals.push(error);
          slot.claiming = false;
        },
      );
    }
  }

  /** One nextIdSync per generator, each checked against the store at the instant it returns. */
  issue(): void {
    const { server, scheduler } = this.#world;
    for (const slot of this.slots) {
      const generator = slot.generator;
      if (!generator) continue;
      let id: bigint;
      try {
        id = generator.nextIdSync();
      } catch {
        slot.refusedAt.push(scheduler.now());
        continue;
      }
      const at = scheduler.now();
      slot.ids.push({ id, at, machine: generator.machine });
      const wrong = violation(server, this.client, generator.machine, id, at, this.#world.start);
      if (wrong) this.violations.push(wrong);
    }
  }

  /** Releases `slot`'s claim as a process shutting one generator down: that slot issues and claims no more. */
  async release(slot: SimulatedSlot): Promise<void> {
    slot.generator = undefined;
    slot.claiming = true;
    await slot.claim?.release();
  }

  /** Stops issuing and claiming (a process that died). */
  stop(): void {
    this.#stopped = true;
    for (const slot of this.slots) slot.generator = undefined;
  }

  issued(): bigint[] {
    return this.slots.flatMap((slot) => slot.ids.map((x) => x.id));
  }

  /** How many IDs it issued from `from` (exclusive) to `to` (inclusive), scheduler time. */
  issuedBetween(from: number, to: number): number {
    return this.slots.reduce((n, slot) => n + slot.ids.filter((x) => x.at > from && x.at <= to).length, 0);
  }

  /** How many requests of operation `op` its client sent. */
  count(op: string): number {
    return this.client.sent.filter((sent) => sent === op).length;
  }
}
