// The vocabulary of the `auto` chain, shared by the chain (auto.ts), its built-in steps
// (auto-steps.ts) and any step a caller adds: a step has a name and a title, and answers
// used / skipped / failed with a sentence saying why.
import type { MachineIdClaim } from '@ids/engine';
import type { AddressOptions, Ec2Options } from '@ids/machine-ip';
import type { HostClaimOptions } from './claim.js';
import type { Env } from './dirs.js';

/** A step's name as it appears in the trail: `explicit`, `private-ip`, `host-claim`, or a caller's own. */
export type AutoStepName = string;

/** What one step of the chain did: one entry of the trail. */
export interface AutoStep {
  /** Which step. */
  readonly step: AutoStepName;
  /** `used`: it gave the ID (the last step of a trail); `skipped`: nothing to try; `failed`: it tried and could not. */
  readonly outcome: 'used' | 'skipped' | 'failed';
  /** Why, in a sentence. */
  readonly detail: string;
}

/**
 * A step's answer. `failed` with `stop` ends the chain with that error as the cause (a value
 * the user set is wrong, or an opted-in source is unreachable); without `stop` the chain goes
 * on. A step that throws stops the chain the same way.
 */
export type AutoStepAnswer =
  | {
      /** It gave the ID. */
      readonly outcome: 'used';
      /** The ID, or a claim holding it. */
      readonly machineId: number | MachineIdClaim;
      /** Where it came from. */
      readonly detail: string;
    }
  | {
      /** It had nothing to try. */
      readonly outcome: 'skipped';
      /** Why there was nothing to try. */
      readonly detail: string;
    }
  | {
      /** It tried and could not. */
      readonly outcome: 'failed';
      /** What was tried and why it gave nothing. */
      readonly detail: string;
      /** When set, the chain ends here with this error as the cause. */
      readonly stop?: unknown;
    };

/** What the chain works from; every option has a default, so `{}` is the usual call. */
export interface AutoMachineIdOptions {
  /** Bits of the layout's machine field. Default 16 (Sonyflake); the provider form takes it from the layout. */
  readonly bits?: number;
  /** The steps, in order. Default AUTO_STEPS; add a step with `[myStep, ...AUTO_STEPS]`. */
  readonly steps?: readonly AutoChainStep[];
  /** An explicit machine ID; wins over everything. Default: IDS_MACHINE_ID from `env`, else none. */
  readonly machineId?: number;
  /** Where IDS_* variables, HOSTNAME and KUBERNETES_SERVICE_HOST are read. Default: process.env. */
  readonly env?: Env;
  /** Names of opt-in steps to run (`ec2`, `ipv6-ula`). Default: IDS_AUTO_OPT_IN from `env`, comma-separated. */
  readonly optIn?: readonly string[];
  /** The interface list for the address steps (tests pass their own). Default: os.networkInterfaces. */
  readonly interfaces?: AddressOptions['interfaces'];
  /** The route tables that break a tie between several addresses. Default: /proc/net/route and /proc/net/ipv6_route. */
  readonly routes?: AddressOptions['routes'];
  /** Let the address steps take addresses of virtual bridges (docker0, cni0, ...). Default false. */
  readonly includeBridges?: boolean;
  /** The EC2 metadata service (opt-in step `ec2`). Default: IDS_EC2_ENDPOINT and IDS_EC2_TIMEOUT_MS from `env`, else the real service with 1000 ms. */
  readonly ec2?: Ec2Options;
  /** The StatefulSet ordinal's offset. Default: IDS_ORDINAL_OFFSET from `env`, else 0. */
  readonly ordinalOffset?: number;
  /**
   * Hold an ID derived from the host (address, ordinal) as a host claim of exactly that ID, so
   * that a second process of this host deriving the same ID fails instead of issuing duplicates,
   * and a restart with the clock behind cannot reissue. Default true.
   */
  readonly guard?: boolean;
  /** The older name of `guard`, for the private IPv4 step only. Default: `guard`. */
  readonly guardPrivateIp?: boolean;
  /** Options of the host claims (directory, clock, range, seams). `dir` defaults to `defaultClaimDir(env)`. */
  readonly claim?: HostClaimOptions;
}

/** What a step is given: the width, the environment, the chain's options, and the claim directory when it needs one. */
export interface AutoStepContext {
  /** Bits of the machine field: a used ID must be below 2^bits. */
  readonly bits: number;
  /** Where the step reads its variables. */
  readonly env: Env;
  /** The options the chain was called with. */
  readonly options: AutoMachineIdOptions;
  /** The host-claim options, `dir` resolved (IDS_CLAIM_DIR, else the state directory). @throws ClaimDirError */
  claimOptions(): HostClaimOptions;
}

/** One named step of the chain. */
export interface AutoChainStep {
  /** The name in the trail and in IDS_AUTO_OPT_IN, e.g. `private-ip`. */
  readonly name: AutoStepName;
  /** The name for a person, in `explain()`: `private IPv4`. */
  readonly title: string;
  /** True when the step runs only if named in `optIn` (or IDS_AUTO_OPT_IN); else it is skipped, saying so. */
  readonly optIn?: boolean;
  /** Tries the step. May return a Promise (then only the async forms of the chain can run it). */
  run(context: AutoStepContext): AutoStepAnswer | Promise<AutoStepAnswer>;
}

/** The answer of a step that gave the ID. */
export function used(machineId: number | MachineIdClaim, detail: string): AutoStepAnswer {
  return { outcome: 'used', machineId, detail };
}

/** The answer of a step with nothing to try. */
export function skipped(detail: string): AutoStepAnswer {
  return { outcome: 'skipped', detail };
}

/** The answer of a step that tried and could not; with `stop`, the chain ends with it as the cause. */
export function failed(detail: string, stop?: unknown): AutoStepAnswer {
  return stop === undefined ? { outcome: 'failed', detail } : { outcome: 'failed', detail, stop };
}
