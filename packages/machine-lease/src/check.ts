// What the stores' Go-style checks (`checkMachineId` answered by etcd, Redis or ZooKeeper) share:
// their common options, the asked ID's check, and a `close()` that gives back what the check
// took, once, after which the check refuses to answer.
import { InvalidArgumentError, type MachineIdCheck } from '@ids/engine';
import { checkAskedId, checkOptionsObject, DEFAULT_TIMEOUT_MS, ms } from './options.js';

/** Go's `CheckMachineID` answered by a store, plus a `close()` Go's lacks. */
export interface StoreMachineIdCheck extends MachineIdCheck {
  (machineId: number): Promise<boolean>;
  /** Gives back what the check took (each store's check says how), and closes what it opened. Idempotent. */
  close(): Promise<void>;
}

/** The option every store's check takes, beside how to reach the store. */
export interface StoreCheckOptions {
  /** The longest one exchange with the store (the connect, each request) may take, in ms, above 0. Default 3,000. */
  readonly timeoutMs?: number;
}

/**
 * Checks that a store check's options are an object, and its `timeoutMs`. @returns that timeout.
 * @throws InvalidArgumentError naming the option.
 */
export function checkTimeoutOption(options: StoreCheckOptions): number {
  return ms(checkOptionsObject(options).timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs', false);
}

/**
 * A store's check made of its two halves: `ask` answers for an ID once it is checked (an integer
 * 0 or more), and `release` runs at the first `close()`. A call after that rejects with
 * `closedError()` (by default InvalidArgumentError naming `check`). `more` adds properties of the
 * store's own (etcd's `signal`).
 */
export function storeCheck<C extends StoreMachineIdCheck>(
  ask: (machineId: number) => Promise<boolean>,
  release: () => Promise<void>,
  closedError: () => Error = () => new InvalidArgumentError('the check was closed', { option: 'check' }),
  more: PropertyDescriptorMap = {},
): C {
  let closed = false;
  const check = async (machineId: number): Promise<boolean> => {
    if (closed) throw closedError();
    return ask(checkAskedId(machineId));
  };
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await release();
  };
  return Object.defineProperties(check, { ...more, close: { value: close, enumerable: true } }) as C;
}
