import { randomBytes } from 'node:crypto';
import { received } from '@ids/engine/internal';
import { LeaseCorruptClaimError } from '@ids/machine-lease/errors';
import { currentOwner, readOwner, readRecordedTime } from '@ids/machine-lease/internal';

/**
 * The keys under a prefix P, all in the hash slot of `{P}` (one node of a Cluster):
 *
 *   {P}:<id>        a claim: `SET NX PX ttl`, its value the holder's identity and random token
 *   {P}:time:<id>   the last instant recorded by any holder of <id> (decimal Unix ms); no TTL,
 *                   so it outlives the claim and the next holder starts after it
 *   {P}:claims      a sorted set of the claimed IDs, scored by expiry: what a listing reads,
 *                   so that allocation never scans the keyspace
 */
export class Keys {
  /** The hash-tagged base every key starts with. */
  readonly base: string;
  constructor(readonly prefix: string) {
    this.base = `{${prefix}}`;
  }

  /** The claim key of `id`. */
  claim(id: number): string {
    return `${this.base}:${id}`;
  }

  /** The recorded-time key of `id`. */
  time(id: number): string {
    return `${this.base}:time:${id}`;
  }

  /** The index of live claims. */
  get index(): string {
    return `${this.base}:claims`;
  }
}

/** Who holds a claim (enough for a person to find the process), and the token that makes it this claim's. */
export interface Owner {
  /** The holder's random token (32 hex digits): compare-and-extend and compare-and-delete match on it. */
  readonly token: string;
  /** The holder's host name. */
  readonly host: string;
  /** The holder's process ID on that host. */
  readonly pid: number;
  /** When the process started (ISO 8601). */
  readonly started: string;
}

/** A new claim value for this process: a fresh random token and its identity, as JSON. */
export function newOwnerValue(): { token: string; value: string } {
  const token = randomBytes(16).toString('hex');
  const owner: Owner = { token, ...currentOwner() };
  return { token, value: JSON.stringify(owner) };
}

/** Reads a claim's value; anything this package would not have written is LeaseCorruptClaimError. */
export function parseOwner(key: string, raw: string): Owner {
  const o = readOwner(raw);
  if (o === undefined || typeof o.token !== 'string' || !/^[0-9a-f]{32}$/.test(o.token)) {
    throw new LeaseCorruptClaimError(
      'redis',
      key,
      `the claim ${key} holds ${received(raw)}: expected the JSON identity of its holder ({"token":...,"host":...,"pid":...,"started":...}); remove the key or use another prefix`,
    );
  }
  return { token: o.token, host: o.host, pid: o.pid, started: o.started };
}

/** Reads a recorded time (decimal Unix ms); anything else is LeaseCorruptClaimError. */
export function parseTime(key: string, raw: string): number {
  return readRecordedTime('redis', key, raw);
}
