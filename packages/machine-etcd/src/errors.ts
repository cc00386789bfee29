import { IdsError } from '@ids/engine';

/**
 * An option of etcdMachineId / etcdCheckMachineId that cannot work; `option` names it. What
 * etcd itself reports is one of the lease errors of @ids/machine-lease (re-exported here), with
 * `store: 'etcd'`.
 */
export class EtcdOptionError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_OPTION';
  override readonly name = 'EtcdOptionError';
  constructor(
    /** The option at fault: 'endpoints', 'prefix', 'ttlSeconds', 'fenceMarginMs', ... */
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
  }
}
