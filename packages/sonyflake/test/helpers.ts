import { FakeClock } from '@ids/engine';
import { privateIpMachineId } from '@ids/machine-ip';
import { Sonyflake } from '../src/index.js';

/** Go's mock interface list (v2/mock/mock.go): one address, 192.168.0.1, so the default machine ID is 1. */
export const GO_MOCK_MACHINE_ID = privateIpMachineId({
  interfaces: () => ({ eth0: [{ address: '192.168.0.1', family: 'IPv4', internal: false }] }),
});

export { runningClock } from '../../engine/test/kit.js';

export const YEAR = 365 * 24 * 3600 * 1000;

/** Awaits `count` IDs of `sf` one after another, as one caller of Go's parallel tests does. */
export async function oneCaller(sf: Sonyflake, count: number): Promise<bigint[]> {
  const ids: bigint[] = [];
  for (let i = 0; i < count; i++) ids.push(await sf.nextId());
  return ids;
}

/**
 * Go's over-the-time-limit case: a generator whose start time is `now` on a fake clock takes
 * `last` 174 years on (its 39-bit time field still holds), then the clock moves a year further.
 */
export function pastTheTimeLimit(now: number): { clock: FakeClock; sf: Sonyflake; last: bigint } {
  const clock = new FakeClock(now);
  const sf = new Sonyflake({ startTime: now, clock, machineId: 1 });
  clock.advance(174 * YEAR);
  const last = sf.nextIdSync();
  clock.advance(1 * YEAR);
  return { clock, sf, last };
}
