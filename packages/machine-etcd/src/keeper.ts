import {
  type Keepalive,
  type KeeperTiming,
  realScheduler,
  type Scheduler,
  LeaseKeeper as StoreLeaseKeeper,
} from '@ids/machine-lease';
import { type EtcdLeaseLostError, etcdErrors } from './errors.js';

export { type Keepalive, type KeeperTiming, realScheduler, type Scheduler };

/** The store-agnostic LeaseKeeper (see @ids/machine-lease), reporting EtcdLeaseLostError. */
export class LeaseKeeper extends StoreLeaseKeeper {
  constructor(
    timing: KeeperTiming,
    scheduler: Scheduler,
    keepalive: Keepalive,
    onLost: (reason: EtcdLeaseLostError) => void,
    grantedAt: number,
  ) {
    super(
      timing,
      scheduler,
      keepalive,
      (reason) => onLost(reason as EtcdLeaseLostError),
      grantedAt,
      etcdErrors,
    );
  }
}
