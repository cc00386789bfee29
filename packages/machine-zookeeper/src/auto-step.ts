// ZooKeeper as a step of @ids/machine-file's `auto` chain: a named provider (the engine's shape),
// so the CLI and the server pass it to the one chain as a configured store, as they do Redis's.
import { type NamedMachineIdProvider, NoMachineIdHereError } from '@ids/engine';
import { errorText } from '@ids/engine/internal';
import { type ZookeeperMachineIdOptions, zookeeperMachineId } from './claim.js';

/** `zookeeperMachineId`'s options, and where IDS_ZOOKEEPER_CONNECT is read when `connect` is not given. */
export interface ZookeeperAutoStepOptions extends ZookeeperMachineIdOptions {
  /** Where IDS_ZOOKEEPER_CONNECT is read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The ZooKeeper step of the `auto` chain, named `zookeeper` (title `ZooKeeper claim`; the CLI's
 * `--zookeeper host:port,…`): when `options.connect` or IDS_ZOOKEEPER_CONNECT is given, it claims
 * an ID with `zookeeperMachineId` and the chain uses it; otherwise it has nothing to try
 * (NoMachineIdHereError, skipped). A ZooKeeper that was asked for but fails (unreachable, a
 * missing chroot, a full field) stops the chain with that error instead of falling through: a
 * host-derived ID beside a ZooKeeper-held fleet could repeat one of its IDs.
 *
 * ```ts no-run
 * const provider = autoMachineId({ stores: [zookeeperAutoStep()] });
 * ```
 *
 * @throws InvalidArgumentError at once for an option that cannot work (a connect string from
 * IDS_ZOOKEEPER_CONNECT is checked when the step runs, and a bad one stops the chain with that error).
 */
export function zookeeperAutoStep(options: ZookeeperAutoStepOptions = {}): NamedMachineIdProvider {
  const { env = process.env, ...zookeeper } = options;
  // Validate what was given now; the connect string may still come from the environment at run time.
  if (zookeeper.connect !== undefined) zookeeperMachineId(zookeeper);
  return {
    name: 'zookeeper',
    title: 'ZooKeeper claim',
    async provider({ bits, note }) {
      const connect = zookeeper.connect ?? (env.IDS_ZOOKEEPER_CONNECT?.trim() || undefined);
      if (connect === undefined) {
        throw new NoMachineIdHereError(
          'IDS_ZOOKEEPER_CONNECT is not set (and no ZooKeeper was given)',
          'skipped',
        );
      }
      try {
        const claim = await zookeeperMachineId({ ...zookeeper, connect })({ bits });
        note?.(`claimed machine ID ${claim.machineId} in ZooKeeper at ${connect} (node ${claim.key})`);
        return claim;
      } catch (error) {
        note?.(`could not claim a machine ID in ZooKeeper at ${connect}: ${errorText(error)}`);
        throw error;
      }
    },
  };
}
