import type { LayoutSpec } from '../src/layout.js';

/** Sonyflake's default layout with the 2014 epoch: 39-bit time in 10 ms units, 8 + 16 bits. */
export const SONYFLAKE_SPEC: LayoutSpec = {
  name: 'sonyflake',
  timeBits: 39,
  timeUnitMs: 10,
  sequenceBits: 8,
  machineBits: 16,
  epochMs: Date.UTC(2014, 8, 1),
};

/** Twitter's snowflake: 41-bit ms time, machine (datacenter 5 + worker 5) above a 12-bit sequence. */
export const TWITTER_SPEC: LayoutSpec = {
  name: 'twitter',
  timeBits: 41,
  timeUnitMs: 1,
  sequenceBits: 12,
  machineBits: 10,
  epochMs: 1288834974657,
  fieldOrder: 'machine-sequence',
  machineParts: [
    { name: 'datacenter', bits: 5 },
    { name: 'worker', bits: 5 },
  ],
};
