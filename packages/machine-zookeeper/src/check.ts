import type { StoreCheckOptions, StoreMachineIdCheck } from '@ids/machine-lease';
import { checkTimeoutOption, DEFAULT_TTL_SECONDS, storeCheck } from '@ids/machine-lease/internal';
import { ZkAnswer, ZkSession } from './client.js';
import { checkConnection, type ZookeeperConnectionOptions } from './options.js';

/**
 * The options of `zookeeperCheckMachineId`: `path` is the parent of the ID nodes (default
 * `/ids/machine-ids`), and `timeoutMs` bounds the connect and each request.
 */
export interface ZookeeperCheckOptions extends ZookeeperConnectionOptions, StoreCheckOptions {}

/**
 * Go's `CheckMachineID` on ZooKeeper, plus what it lacks: the IDs go with the session, and typed
 * errors. `close()` closes the session, which deletes every ID node this check made.
 */
export interface ZookeeperMachineIdCheck extends StoreMachineIdCheck {}

/** Where the check's ID nodes live when no path is given. */
export const DEFAULT_CHECK_PATH = '/ids/machine-ids';

/**
 * A `checkMachineId` for either generator, as Go's settings show it: creates the ephemeral node
 * `<path>/<id>` and answers true when this call created it, false when it exists. The nodes
 * belong to the check's session, so they go when it closes and, unlike a Redis set, when the
 * process dies (once the session expires, 10 s by default). It fences nothing: a paused process
 * issues again when it resumes, whatever happened meanwhile. Use `zookeeperMachineId` for that.
 *
 * ```ts no-run
 * const check = zookeeperCheckMachineId({ connect: 'zk1:2181' });
 * const sonyflake = await Sonyflake.create({ machineId: 7, checkMachineId: check });
 * // ... on shutdown:
 * await sonyflake.close();
 * await check.close();
 * ```
 *
 * @throws InvalidArgumentError at once for an option that cannot work (names it).
 * The check rejects (never a silent true or false) with the lease errors of @ids/machine-lease,
 * `store: 'zookeeper'`: StoreUnavailableError when ZooKeeper does not answer within
 * `timeoutMs`, LeaseStoreRefusedError (an ACL refuses); or with ZookeeperChrootError.
 */
export function zookeeperCheckMachineId(options: ZookeeperCheckOptions = {}): ZookeeperMachineIdCheck {
  const timeoutMs = checkTimeoutOption(options);
  const { connect, path } = checkConnection({ ...options, path: options.path ?? DEFAULT_CHECK_PATH });
  let session: Promise<ZkSession> | undefined;

  const open = async () => {
    const s = await ZkSession.open(connect, {
      sessionTimeoutMs: DEFAULT_TTL_SECONDS * 1000,
      timeoutMs,
      feature: 'machine-id',
    });
    await s.mkdirp(path);
    return s;
  };

  return storeCheck<ZookeeperMachineIdCheck>(
    async (machineId) => {
      // A failed open is not kept: the next call tries again.
      session ??= open().catch((error) => {
        session = undefined;
        throw error;
      });
      try {
        await (await session).create(`${path}/${machineId}`, '', 'ephemeral');
        return true;
      } catch (error) {
        if (error instanceof ZkAnswer && error.answer === 'NODE_EXISTS') return false;
        throw error;
      }
    },
    async () => {
      const s = await session?.catch(() => undefined);
      await s?.close();
    },
  );
}
