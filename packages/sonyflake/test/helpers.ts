import { privateIpMachineId } from '@ids/machine-ip';

/** Go's mock interface list (v2/mock/mock.go): one address, 192.168.0.1, so the default machine ID is 1. */
export const GO_MOCK_MACHINE_ID = privateIpMachineId({
  interfaces: () => ({ eth0: [{ address: '192.168.0.1', family: 'IPv4', internal: false }] }),
});

export { runningClock } from '../../engine/test/kit.js';

export const YEAR = 365 * 24 * 3600 * 1000;
