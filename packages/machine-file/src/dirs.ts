import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { errorText } from '@ids/engine/internal';
import { ClaimDirError } from './errors.js';

/** Environment variables read by this package. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Where host claims live unless told otherwise:
 * 1. `IDS_CLAIM_DIR`, if set;
 * 2. else `$XDG_STATE_HOME/ids/claims` (when XDG_STATE_HOME is an absolute path);
 * 3. else `~/.local/state/ids/claims`.
 *
 * A state directory, not a temporary or runtime one: claim files keep the last time recorded for
 * each machine ID, and that record matters most after a reboot (when a host's clock is most
 * likely to be wrong), which /tmp and /run do not survive. It needs no root, and every process
 * of one user (the usual way a service's processes run) finds the same directory.
 *
 * @throws ClaimDirError when no home directory is known and neither variable is set.
 */
export function defaultClaimDir(env: Env = process.env): string {
  const explicit = env.IDS_CLAIM_DIR;
  if (explicit) return resolve(explicit);
  const state = env.XDG_STATE_HOME;
  if (state && isAbsolute(state)) return join(state, 'ids', 'claims');
  let home: string;
  try {
    home = homedir();
  } catch (error) {
    throw new ClaimDirError(
      `no claim directory: IDS_CLAIM_DIR and XDG_STATE_HOME are unset and the home directory is unknown (${errorText(error)}); set IDS_CLAIM_DIR`,
      { cause: error },
    );
  }
  if (!home) {
    throw new ClaimDirError(
      'no claim directory: IDS_CLAIM_DIR and XDG_STATE_HOME are unset and the home directory is unknown; set IDS_CLAIM_DIR',
    );
  }
  return join(home, '.local', 'state', 'ids', 'claims');
}
