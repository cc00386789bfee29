// Whether an ID is believable in a layout. An ID does not say which layout made it: a Discord ID
// is also a believable Sonyflake one from 2017, and a Twitter ID read as Sonyflake is dated in
// 2044. The one rule the CLI's `ids decompose` and the inspector page both judge readings by.
import { toTimeIn } from './id.js';
import type { Layout } from './layout.js';

/** How far past the clock an ID's time may lie: the clocks of the hosts that made it disagree by less. */
export const FUTURE_SLACK_MS = 60_000;

/**
 * How long after its epoch a layout's first believable ID lies. A generator starts issuing when
 * it is deployed, not at the instant its epoch names, while small numbers are everywhere: "hello"
 * in base36 is 29234652, 10 ms after Sonyflake's epoch. One day keeps those out and still takes
 * an ID made on the day a layout's epoch was chosen to be the deploy date, a day later.
 */
export const NEAR_EPOCH_MS = 86_400_000;

/**
 * Why `id` is not believable as an ID of `layout` at `nowMs`, or undefined when it is. The rule:
 * the ID fits the layout's bits (so its time lies within the layout's life), and its time lies
 * at least NEAR_EPOCH_MS after the layout's epoch and at most FUTURE_SLACK_MS after `nowMs`.
 */
export function implausibility(layout: Layout, id: bigint, nowMs: number): string | undefined {
  if (id > layout.maxId) {
    const width = layout.timeBits + layout.sequenceBits + layout.machineBits;
    return `it has bits set above the ${width} bits the layout uses`;
  }
  if (layout.epochMs > nowMs + FUTURE_SLACK_MS) {
    return `today is before the layout's epoch (${new Date(layout.epochMs).toISOString()}): no ID of it can exist yet`;
  }
  const time = toTimeIn(layout, id);
  if (time.getTime() > nowMs + FUTURE_SLACK_MS) return `its time, ${time.toISOString()}, is in the future`;
  if (time.getTime() < layout.epochMs + NEAR_EPOCH_MS) {
    return `its time, ${time.toISOString()}, is within a day of the layout's epoch: more likely a small number than an ID`;
  }
  return undefined;
}

/**
 * The entries of `among` whose layout reads `id` plausibly at `nowMs` (see implausibility), in
 * their order: the layouts an ID may have come from, e.g. `plausibleLayouts(id, Date.now(),
 * Object.values(NAMED_LAYOUTS))`.
 */
export function plausibleLayouts<T extends { readonly layout: Layout }>(
  id: bigint,
  nowMs: number,
  among: readonly T[],
): T[] {
  return among.filter((entry) => implausibility(entry.layout, id, nowMs) === undefined);
}
