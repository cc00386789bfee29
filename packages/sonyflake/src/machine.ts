// Sonyflake's default machine ID, and the `'auto'` setting. The default is what a user can
// predict: IDS_MACHINE_ID when the environment sets it, else Go's rule (the private IPv4
// address). The `auto` chain, which can end in a host claim (unique on this host only), is
// never the default: it runs only when asked for by name.
import { AsyncSettingError, type MachineIdProvider, type MachineIdSource } from '@ids/engine';
import { envMachineIds, importOptional, MACHINE_ID_ENV } from '@ids/engine/internal';
import { type InterfaceSource, privateIpMachineId } from '@ids/machine-ip';

function hint(bits: number): string {
  return `set ${MACHINE_ID_ENV}=N or pass { machineId: N } (N from 0 to ${2 ** bits - 1}), or pass { machineId: 'auto' } to fall back to a host claim (@ids/machine-file; unique on this host only)`;
}

/**
 * The machine ID `Sonyflake` uses when `machineId` is not given: IDS_MACHINE_ID from `env` when
 * set (decimal digits, 0 to 2^bits - 1), else Go's private-IPv4 provider, whose error says what
 * to set instead. `env` and `interfaces` are seams for tests (default: process.env and the
 * host's interfaces).
 *
 * @throws InvalidMachineIdError when IDS_MACHINE_ID is set but is not a decimal integer in range.
 */
export function defaultMachineIdSource(
  bits: number,
  env: Readonly<Record<string, string | undefined>> = process.env,
  interfaces?: InterfaceSource,
): MachineIdSource {
  const [id] = envMachineIds(env, { max: 2 ** bits - 1 }) ?? [];
  if (id !== undefined) return id;
  return privateIpMachineId(interfaces ? { hint: hint(bits), interfaces } : { hint: hint(bits) });
}

/**
 * `machineId: 'auto'`: @ids/machine-file's `auto` chain, the same provider with the same steps
 * for the same variables as the `ids` CLI and `ids-server` (IDS_MACHINE_ID; a claim in the
 * store configured: IDS_REDIS_URL, IDS_ETCD_ENDPOINTS or IDS_ZOOKEEPER_CONNECT, its package
 * imported only then; a StatefulSet ordinal, EC2 metadata and a unique-local IPv6 address when
 * opted in with IDS_AUTO_OPT_IN, the private IPv4 address held as a host claim, then a host
 * claim), for `Sonyflake.create`, which runs every step, asynchronous ones too. A host claim is
 * announced with a process warning (code IDS_HOST_CLAIM), since it is unique on this host only.
 *
 * @throws MissingPackageError when @ids/machine-file is not installed (a configured store's
 * package missing is the chain's AutoMachineIdError, with MissingPackageError as its cause).
 */
export async function autoMachineIdSource(): Promise<MachineIdProvider> {
  // An optional peer, loaded only when 'auto' is asked for.
  const { autoMachineId, autoStepTable } = await importOptional(
    '@ids/machine-file',
    () => import('@ids/machine-file'),
    "machineId: 'auto'",
  );
  return autoMachineId({
    onChosen: (auto) => {
      if (auto.step !== 'host-claim') return;
      // The chain's store rows name the variables that put a store's step in it.
      const stores = autoStepTable()
        .flatMap((row) => row.env ?? [])
        .join(', ');
      process.emitWarning(
        `machine ID ${auto.id} is a host claim: unique on this host only. For IDs unique across hosts, give each host its own ID (${MACHINE_ID_ENV}=N), or claim one in a store (set ${stores})`,
        { code: 'IDS_HOST_CLAIM' },
      );
    },
  });
}

/** The synchronous constructor cannot load the auto chain. */
export function autoNeedsCreate(): AsyncSettingError {
  return new AsyncSettingError(
    "machineId: 'auto' loads @ids/machine-file; use `await Sonyflake.create({ machineId: 'auto' })`",
  );
}
