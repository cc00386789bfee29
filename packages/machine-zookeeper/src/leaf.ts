import { InvalidArgumentError } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { LeaseCorruptClaimError } from '@ids/machine-lease/errors';
import { STORE, type ZkSession } from './client.js';
import { ZookeeperLeafWorkerError } from './errors.js';

/** Which Leaf worker to take over: Leaf's snowflake `name` and the `ip:port` it registered. */
export interface LeafWorkerOptions {
  /** Leaf's `leaf.name`: the tree is `/snowflake/<name>/forever`. */
  readonly name: string;
  /** The IP address the Leaf instance registered (its own, as Leaf found it). */
  readonly ip: string;
  /** The port the Leaf instance registered (its RPC/HTTP port). */
  readonly port: number;
}

/** A worker found in a Leaf `forever` tree. */
export interface LeafWorker {
  /** The worker ID Leaf gave this ip:port: the sequence number of its node. */
  readonly workerId: number;
  /** The node, `/snowflake/<name>/forever/<ip>:<port>-<sequence>`. */
  readonly path: string;
  /** The last time the Leaf instance reported (Unix ms): none of its IDs is later. */
  readonly timestamp: number;
}

/** Checks the Leaf options. @throws InvalidArgumentError naming `leaf.<field>`. */
export function checkLeafOptions(value: unknown): LeafWorkerOptions {
  const o = value as Partial<LeafWorkerOptions> | null;
  if (typeof o !== 'object' || o === null) {
    throw new InvalidArgumentError(`expected { name, ip, port }, received ${received(value)}`, {
      option: 'leaf',
    });
  }
  if (typeof o.name !== 'string' || !/^[^/\s]{1,200}$/.test(o.name)) {
    throw new InvalidArgumentError(
      `expected Leaf's snowflake name (one path segment), received ${received(o.name)}`,
      { option: 'leaf.name' },
    );
  }
  // Letters, digits, dots and colons: an IPv4 or IPv6 address (a '-' would break Leaf's node names).
  if (typeof o.ip !== 'string' || !/^[0-9A-Za-z.:]{1,100}$/.test(o.ip)) {
    throw new InvalidArgumentError(`expected the IP address Leaf registered, received ${received(o.ip)}`, {
      option: 'leaf.ip',
    });
  }
  if (typeof o.port !== 'number' || !Number.isInteger(o.port) || o.port < 1 || o.port > 65_535) {
    throw new InvalidArgumentError(`expected a port, an integer 1 to 65535, received ${received(o.port)}`, {
      option: 'leaf.port',
    });
  }
  return { name: o.name, ip: o.ip, port: o.port };
}

/** `/snowflake/<name>/forever`: where Leaf keeps one persistent node per ip:port it ever saw. */
export function leafForeverPath(name: string): string {
  return `/snowflake/${name}/forever`;
}

/**
 * Finds the worker ID Leaf gave `ip:port`. Leaf's snowflake mode creates, once per ip:port, a
 * persistent sequential node `<ip>:<port>-<10-digit sequence>` under the forever path; the
 * sequence is the worker ID, and the node's data is JSON with `ip`, `port` (a string) and
 * `timestamp` (Unix ms), which the Leaf instance refreshes every few seconds while it runs.
 *
 * @throws ZookeeperLeafWorkerError when there is no tree or no node for ip:port.
 * @throws LeaseCorruptClaimError (`store: 'zookeeper'`) for a node whose name or data is not Leaf's, or two nodes
 * for the same ip:port (nothing is written either way).
 */
export async function readLeafWorker(session: ZkSession, leaf: LeafWorkerOptions): Promise<LeafWorker> {
  const forever = leafForeverPath(leaf.name);
  const address = `${leaf.ip}:${leaf.port}`;
  const children = await session.getChildren(forever);
  if (children === undefined) {
    throw new ZookeeperLeafWorkerError(
      `there is no Leaf tree at ${forever}: check leaf.name (Leaf's leaf.name setting)`,
    );
  }
  const mine = children.filter((child) => child.slice(0, child.lastIndexOf('-')) === address);
  if (mine.length === 0) {
    throw new ZookeeperLeafWorkerError(
      `Leaf never registered ${address} under ${forever} (${children.length} other workers): check leaf.ip and leaf.port, as the Leaf instance logged them`,
    );
  }
  if (mine.length > 1) {
    throw new LeaseCorruptClaimError(
      STORE,
      forever,
      `${forever} holds ${mine.length} nodes for ${address} (${mine.join(', ')}): Leaf makes one per ip:port; remove the wrong one`,
    );
  }
  const name = mine[0] as string;
  const path = `${forever}/${name}`;
  const sequence = name.slice(name.lastIndexOf('-') + 1);
  if (!/^\d{10}$/.test(sequence)) {
    throw new LeaseCorruptClaimError(
      STORE,
      path,
      `the node ${path} is not a Leaf worker: expected <ip>:<port>-<10-digit sequence>, received ${received(name)}`,
    );
  }
  const found = await session.getData(path);
  if (found === undefined)
    throw new ZookeeperLeafWorkerError(`the Leaf node ${path} was deleted while it was read`);
  return { workerId: Number(sequence), path, timestamp: leafTimestamp(path, found.data, leaf) };
}

/** The `timestamp` of a Leaf node's JSON; anything Leaf would not have written is corrupt. */
function leafTimestamp(path: string, raw: string, leaf: LeafWorkerOptions): number {
  let data: { ip?: unknown; port?: unknown; timestamp?: unknown } | undefined;
  try {
    data = JSON.parse(raw);
  } catch {
    data = undefined;
  }
  if (
    typeof data !== 'object' ||
    data === null ||
    data.ip !== leaf.ip ||
    String(data.port) !== String(leaf.port) ||
    typeof data.timestamp !== 'number' ||
    !Number.isSafeInteger(data.timestamp) ||
    data.timestamp < 0
  ) {
    throw new LeaseCorruptClaimError(
      STORE,
      path,
      `the Leaf node ${path} holds ${received(raw)}: expected Leaf's JSON {"ip":"${leaf.ip}","port":"${leaf.port}","timestamp":<Unix ms>}`,
    );
  }
  return data.timestamp;
}
