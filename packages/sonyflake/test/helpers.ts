import type { Clock } from '@ids/engine';
import { privateIpMachineId } from '@ids/machine-ip';

/** Go's mock interface list (v2/mock/mock.go): one address, 192.168.0.1, so the default machine ID is 1. */
export const GO_MOCK_MACHINE_ID = privateIpMachineId({
  interfaces: () => ({ eth0: [{ address: '192.168.0.1', family: 'IPv4', internal: false }] }),
});

/**
 * A clock that moves forward a little on every read, like a real one under a tight loop, and
 * whose sleeps move it forward instead of waiting. `stepMs` is the most one read advances it.
 */
export function runningClock(startMs: number, stepMs = 0.02): Clock & { reads: number } {
  let now = startMs;
  const clock = {
    reads: 0,
    now() {
      clock.reads++;
      now += Math.random() * stepMs;
      return now;
    },
    sleepSync(ms: number) {
      if (ms > 0) now += ms;
    },
    async sleep(ms: number) {
      if (ms > 0) now += ms;
    },
  };
  return clock;
}

export const YEAR = 365 * 24 * 3600 * 1000;
