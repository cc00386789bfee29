import { received } from '@ids/engine/internal';
import { LeaseCorruptClaimError } from '@ids/machine-lease/errors';
import { type Owner, readOwner, readRecordedTime } from '@ids/machine-lease/internal';
import { STORE } from './client.js';

/**
 * The nodes under a base path B:
 *
 *   B/claims/<id>   a claim: an ephemeral node of the holder's session, so it vanishes when the
 *                   session ends or expires; its data is the holder's identity (JSON: host,
 *                   pid, process start time)
 *   B/times/<id>    the last instant recorded by any holder of <id> (decimal Unix ms); a
 *                   persistent node, so the next holder starts after it
 *
 * Claims and times sit in two parents so that listing the claims is one getChildren, and
 * nothing but claims is found there. IDs are plain decimal, as a person types them in zkCli.
 */
export class Paths {
  constructor(readonly base: string) {}

  get claims(): string {
    return `${this.base}/claims`;
  }

  get times(): string {
    return `${this.base}/times`;
  }

  claim(id: number): string {
    return `${this.claims}/${id}`;
  }

  time(id: number): string {
    return `${this.times}/${id}`;
  }

  /** The ID of a child of B/claims; a name that is not one is someone else's node. */
  idOf(child: string): number {
    if (!/^(0|[1-9]\d{0,9})$/.test(child)) {
      throw new LeaseCorruptClaimError(
        STORE,
        `${this.claims}/${child}`,
        `the node ${this.claims}/${child} is not a claim: expected a decimal machine ID as its name, received ${received(child)}; remove it or use another path`,
      );
    }
    return Number(child);
  }
}

/** Reads a claim's data; anything this package would not have written is LeaseCorruptClaimError. */
export function parseOwner(path: string, raw: string): Owner {
  const o = readOwner(raw);
  if (o === undefined) {
    throw new LeaseCorruptClaimError(
      STORE,
      path,
      `the claim ${path} holds ${received(raw)}: expected the JSON identity of its holder ({"host":...,"pid":...,"started":...}); remove the node or use another path`,
    );
  }
  return { host: o.host, pid: o.pid, started: o.started };
}

/** Reads a recorded time (decimal Unix ms); anything else is LeaseCorruptClaimError. */
export function parseTime(path: string, raw: string): number {
  return readRecordedTime(STORE, path, raw);
}
