/// <reference path="./zk.d.ts" />
import * as zk from 'node-zookeeper-client';

// The shapes of ZooKeeper's nodes, operations and watch events as @ids reads them, and their
// translation from node-zookeeper-client's (buffers, numeric modes and event types): what a
// caller of ZkSession sees, kept apart from how the session runs requests.

/** A node's metadata as this package reads it (zxids as hex strings). */
export interface NodeStat {
  /** The data's version: bumped by every setData. */
  readonly version: number;
  /** The children's version: bumped by every create and delete below the node. */
  readonly cversion: number;
  /** The session that owns an ephemeral node (16 hex digits); undefined for a persistent one. */
  readonly owner: string | undefined;
  /** The zxid of the create (16 hex digits): a node re-created at the same path has another. */
  readonly czxid: string;
}

/** What kind of node `create` makes. */
export type NodeKind = 'persistent' | 'ephemeral' | 'persistent-sequential' | 'ephemeral-sequential';

/** Check that the node at `path` is at `version` (-1: any). */
export interface CheckOp {
  /** The kind of operation. */
  readonly op: 'check';
  /** The node. */
  readonly path: string;
  /** The version it must be at. */
  readonly version: number;
}

/** Create the node at `path`. */
export interface CreateOp {
  /** The kind of operation. */
  readonly op: 'create';
  /** The node. */
  readonly path: string;
  /** Its data (UTF-8). */
  readonly data: string;
  /** Its kind, persistent by default. */
  readonly kind?: NodeKind;
}

/** Set the data of the node at `path` if it is at `version` (-1: any). */
export interface SetOp {
  /** The kind of operation. */
  readonly op: 'set';
  /** The node. */
  readonly path: string;
  /** Its new data (UTF-8). */
  readonly data: string;
  /** The version it must be at. */
  readonly version: number;
}

/** An operation of `ZkSession.multi`: all apply, or none. */
export type MultiOp = CheckOp | CreateOp | SetOp;

/** What a watch reports: the node was created, deleted or changed, or the session ended. */
export type WatchEvent = 'created' | 'deleted' | 'changed' | 'children' | 'session-ended';

/** The library's create modes, by this package's names. */
export const MODES: Record<NodeKind, number> = {
  persistent: zk.CreateMode.PERSISTENT,
  ephemeral: zk.CreateMode.EPHEMERAL,
  'persistent-sequential': zk.CreateMode.PERSISTENT_SEQUENTIAL,
  'ephemeral-sequential': zk.CreateMode.EPHEMERAL_SEQUENTIAL,
};

export const hex = (buffer: Buffer) => buffer.toString('hex');

/** A node's metadata from the library's Stat (a persistent node's owner is all zeros). */
export function statOf(stat: zk.Stat): NodeStat {
  const owner = hex(stat.ephemeralOwner);
  return {
    version: stat.version,
    cversion: stat.cversion,
    owner: /^0+$/.test(owner) ? undefined : owner,
    czxid: hex(stat.czxid),
  };
}

/** A watch event, by the library's type, as WatchEvent names it. */
export function watchEventOf(event: zk.ZkEvent): WatchEvent {
  const type = event.getType();
  return type === zk.Event.NODE_CREATED
    ? 'created'
    : type === zk.Event.NODE_DELETED
      ? 'deleted'
      : type === zk.Event.NODE_DATA_CHANGED
        ? 'changed'
        : 'children';
}
