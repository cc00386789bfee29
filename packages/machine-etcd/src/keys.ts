import { received } from '@ids/engine/internal';
import { LeaseCorruptClaimError } from '@ids/machine-lease/errors';
import { type Owner, readOwner, readRecordedTime } from '@ids/machine-lease/internal';

/**
 * The keys under a prefix P:
 *
 *   P/<id>        a claim: bound to the holder's lease, so it vanishes with the lease; its value
 *                 is the holder's identity (JSON: host, pid, process start time)
 *   P/time/<id>   the last instant recorded by any holder of <id> (decimal Unix ms); it outlives
 *                 the lease, so the next holder starts after it
 *
 * IDs are plain decimal (P/7, not P/0007), as a person would type them in etcdctl. Claims are
 * exactly the keys from `P/0` up to `P/:` (':' follows '9'), which leaves `P/time/...` out of
 * a scan of claims.
 */
export class Keys {
  constructor(readonly prefix: string) {}

  claim(id: number): string {
    return `${this.prefix}/${id}`;
  }

  time(id: number): string {
    return `${this.prefix}/time/${id}`;
  }

  /** The range holding every claim key and nothing else. */
  get claims(): { start: string; end: string } {
    return { start: `${this.prefix}/0`, end: `${this.prefix}/:` };
  }

  /** The ID of a claim key from a scan; a name that is not one is someone else's key. */
  idOf(key: string): number {
    const tail = key.slice(this.prefix.length + 1);
    if (!/^(0|[1-9]\d{0,9})$/.test(tail)) {
      throw new LeaseCorruptClaimError(
        'etcd',
        key,
        `the key ${JSON.stringify(key)} under the claim prefix is not <prefix>/<machine id>: expected a decimal integer after ${this.prefix}/, received ${received(tail)}`,
      );
    }
    return Number(tail);
  }
}

export { currentOwner, type Owner } from '@ids/machine-lease/internal';

function text(value: Uint8Array): string {
  return Buffer.from(value).toString('utf8');
}

/** Reads a claim's value; anything this package would not have written is LeaseCorruptClaimError. */
export function parseOwner(key: string, value: Uint8Array): Owner {
  const raw = text(value);
  const o = readOwner(raw);
  if (o === undefined) {
    throw new LeaseCorruptClaimError(
      'etcd',
      key,
      `the claim ${key} holds ${received(raw)}: expected the JSON identity of its holder ({"host":...,"pid":...,"started":...}); remove the key or use another prefix`,
    );
  }
  return { host: o.host, pid: o.pid, started: o.started };
}

/** Reads a recorded time (decimal Unix ms); anything else is LeaseCorruptClaimError. */
export function parseTime(key: string, value: Uint8Array): number {
  return readRecordedTime('etcd', key, text(value));
}
