// The id-server example: the ID service of @ids/server started from code, one machine ID on
// loopback. Everything a deployment needs (routes, several machine IDs, health, metrics,
// OpenAPI, tokens, graceful shutdown) is the package's; this file only picks the machine ID.
import { startIdServer } from '@ids/server';

/**
 * Starts the service with the explicit `machineId` when given, else the package's `auto`
 * source (IDS_MACHINE_ID, the private IPv4 address held as a host claim, or a host claim in
 * IDS_CLAIM_DIR). Any other option of `startIdServer` passes through.
 *
 * @param {{ machineId?: number } & import('@ids/server').IdServerOptions} [options]
 * @returns {Promise<import('@ids/server').RunningIdServer>}
 */
export function startExample({ machineId, ...options } = {}) {
  return startIdServer({
    port: 0,
    ...(machineId === undefined ? {} : { machineIdSource: 'explicit', machineIds: [machineId] }),
    ...options,
  });
}
