import type { MachineIdClaim } from '@ids/engine';
import { errorText } from '@ids/engine/internal';
import { type ZookeeperMachineIdOptions, zookeeperMachineId } from './claim.js';

/** What the `auto` chain tells a step (the fields this step reads). */
export interface ZookeeperAutoStepContext {
  /** Bits of the machine field. */
  readonly bits: number;
  /** Where IDS_ZOOKEEPER_CONNECT is read. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The step's answer, in the chain's vocabulary: used, skipped, or failed (stopping the chain). */
export type ZookeeperAutoStepAnswer =
  | {
      /** It gave the ID. */
      readonly outcome: 'used';
      /** The claim holding it. */
      readonly machineId: MachineIdClaim;
      /** Where it came from. */
      readonly detail: string;
    }
  | {
      /** No ZooKeeper was given. */
      readonly outcome: 'skipped';
      /** Why there was nothing to try. */
      readonly detail: string;
    }
  | {
      /** The ZooKeeper asked for could not give an ID. */
      readonly outcome: 'failed';
      /** What was tried and why it gave nothing. */
      readonly detail: string;
      /** The error that ends the chain (its cause). */
      readonly stop: unknown;
    };

/** A named step for `@ids/machine-file`'s `auto` chain (its `AutoChainStep` shape). */
export interface ZookeeperAutoStep {
  /** `zookeeper`, in the trail and in `--explain`. */
  readonly name: 'zookeeper';
  /** `ZooKeeper claim`, for a person. */
  readonly title: string;
  /** Claims an ID in ZooKeeper when a connect string is given; skipped otherwise. */
  run(context: ZookeeperAutoStepContext): Promise<ZookeeperAutoStepAnswer>;
}

/**
 * The ZooKeeper step of the `auto` chain (the CLI's `--zookeeper host:port,…`): when
 * `options.connect` or IDS_ZOOKEEPER_CONNECT is given, it claims an ID with
 * `zookeeperMachineId` and the chain uses it; otherwise it is skipped. A ZooKeeper that was
 * asked for but fails (unreachable, a missing chroot, a full field) stops the chain instead of
 * falling through: a host-derived ID beside a ZooKeeper-held fleet could repeat one of its IDs.
 *
 * ```ts no-run
 * const { machineId, trail } = await autoMachineIdAsync({ steps: [zookeeperAutoStep(), ...AUTO_STEPS] });
 * ```
 *
 * @throws ZookeeperOptionError at once for an option that cannot work (a connect string from
 * IDS_ZOOKEEPER_CONNECT is checked when the step runs, and a bad one stops the chain with that error).
 */
export function zookeeperAutoStep(options: ZookeeperMachineIdOptions = {}): ZookeeperAutoStep {
  // Validate what was given now; the connect string may still come from the environment.
  if (options.connect !== undefined) zookeeperMachineId(options);
  return {
    name: 'zookeeper',
    title: 'ZooKeeper claim',
    async run({ bits, env }) {
      const connect = options.connect ?? (env.IDS_ZOOKEEPER_CONNECT?.trim() || undefined);
      if (connect === undefined) {
        return {
          outcome: 'skipped',
          detail: 'IDS_ZOOKEEPER_CONNECT is not set (and no ZooKeeper was given)',
        };
      }
      try {
        const claim = await zookeeperMachineId({ ...options, connect })({ bits });
        return {
          outcome: 'used',
          machineId: claim,
          detail: `claimed machine ID ${claim.machineId} in ZooKeeper at ${connect} (node ${claim.key})`,
        };
      } catch (error) {
        return {
          outcome: 'failed',
          detail: `could not claim a machine ID in ZooKeeper at ${connect}: ${errorText(error)}`,
          stop: error,
        };
      }
    },
  };
}
