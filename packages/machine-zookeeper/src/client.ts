/// <reference path="./zk.d.ts" />
// node-zookeeper-client has no types; zk.d.ts declares them, and goes wherever this file is
// compiled (the other packages' tests reach it by path through test/helpers.ts).
import { errorText } from '@ids/engine/internal';
import { LeaseLostError, LeaseStoreRefusedError, StoreUnavailableError } from '@ids/machine-lease/errors';
import { bounded, StoreTimeout } from '@ids/machine-lease/internal';
import * as zk from 'node-zookeeper-client';
import { type ConnectString, parseConnectString } from './connect-string.js';
import { CONNECTED, dialEndpoints, shut } from './connection.js';
import { ZookeeperChrootError } from './errors.js';
import {
  hex,
  MODES,
  type MultiOp,
  type NodeKind,
  type NodeStat,
  statOf,
  type WatchEvent,
  watchEventOf,
} from './nodes.js';

/** The store's name in the lease errors this package raises (their `store`). */
export const STORE = 'zookeeper';

/** How to open a session. */
export interface SessionOptions {
  /** The session timeout asked for, in ms; the server may grant another (see `timeoutMs`). */
  readonly sessionTimeoutMs: number;
  /** The longest the connect, and then each request, may take, in ms. */
  readonly timeoutMs: number;
  /** The longest the connect may take, in ms, when less than `timeoutMs` (a caller's own deadline). Default `timeoutMs`. */
  readonly connectMs?: number;
  /** What the session is for (machine IDs or locks), carried by its StoreUnavailableError. */
  readonly feature: StoreUnavailableError['feature'];
}

/** The answers that a caller branches on, by ZooKeeper's names; anything else is an error. */
const EXPECTED = new Set(['NO_NODE', 'NODE_EXISTS', 'BAD_VERSION', 'NOT_EMPTY']);

/**
 * An error ZooKeeper answered with: one a caller branches on (`NO_NODE`, `NODE_EXISTS`,
 * `BAD_VERSION`, `NOT_EMPTY`), or one that waiting will not fix (`NO_AUTH`, ...). It is the lease
 * family's LeaseStoreRefusedError (`store: 'zookeeper'`), so one a caller did not expect still
 * reaches the user typed.
 */
export class ZkAnswer extends LeaseStoreRefusedError {
  constructor(
    /** ZooKeeper's name of the answer, e.g. `NODE_EXISTS`. */
    readonly answer: string,
    /** The node (or nodes, for a transaction) it was about. */
    readonly path: string,
    message = `ZooKeeper answered ${answer} at ${path}`,
    options?: { cause?: unknown },
  ) {
    super(STORE, message, options);
  }
}

/**
 * One ZooKeeper session over node-zookeeper-client, with promises, bounded waits and this
 * package's errors. The session is the unit of liveness: ephemeral nodes live exactly as long
 * as it does, and once it has expired the object stays dead (a new session is a new ZkSession).
 * The client queues requests while it reconnects; every call here is bounded by `timeoutMs`
 * so that a caller never hangs on a server that stopped answering.
 */
export class ZkSession {
  readonly #client: zk.Client;
  readonly #timeoutMs: number;
  readonly #where: string;
  readonly #feature: StoreUnavailableError['feature'];
  #ended: string | undefined;
  readonly #endListeners = new Set<(why: string) => void>();

  private constructor(client: zk.Client, where: ConnectString, options: SessionOptions) {
    this.#client = client;
    this.#timeoutMs = options.timeoutMs;
    this.#feature = options.feature;
    this.#where = where.text;
    client.on('expired', () => this.#end('expired'));
  }

  /**
   * Opens a session; resolves once the server granted it (and, with a chroot, once the chroot
   * is found to exist).
   * @throws InvalidArgumentError for a connect string that is not host:port[,…][/chroot].
   * @throws StoreUnavailableError when no session was granted within `timeoutMs`.
   * @throws ZookeeperChrootError when the chroot does not exist.
   */
  static async open(connect: string | ConnectString, options: SessionOptions): Promise<ZkSession> {
    const where = typeof connect === 'string' ? parseConnectString(connect) : connect;
    // retries: 0, the library's default: a retried create could leave an orphan; callers retry knowingly.
    const client = zk.createClient(where.text, {
      sessionTimeout: options.sessionTimeoutMs,
      spinDelay: 200,
      retries: 0,
    });
    dialEndpoints(client, where);
    const session = new ZkSession(client, where, options);
    const connectMs = Math.min(options.timeoutMs, options.connectMs ?? options.timeoutMs);
    try {
      await bounded(connectMs, async () => {
        const connected = new Promise<void>((resolve) => client.once('connected', () => resolve()));
        client.connect();
        await connected;
      });
    } catch (error) {
      shut(client);
      throw error instanceof StoreTimeout
        ? new StoreUnavailableError(
            STORE,
            options.feature,
            `no ZooKeeper session from ${where.servers.join(',')} within ${connectMs} ms (nothing listening, or no quorum)`,
          )
        : error;
    }
    if (where.chroot !== undefined && (await session.exists('/')) === undefined) {
      session.close();
      throw new ZookeeperChrootError(
        where.chroot,
        `the chroot ${where.chroot} of ${JSON.stringify(where.text)} does not exist on the server; create it first (zkCli.sh create ${where.chroot}) or drop it from the connect string`,
      );
    }
    return session;
  }

  /** The session's ID, 16 hex digits, as the server prints it (0x…). */
  get id(): string {
    return hex(this.#client.getSessionId());
  }

  /** The session timeout the server granted, in ms. */
  get timeoutMs(): number {
    return this.#client.getSessionTimeout();
  }

  /** Why the session ended ('expired', 'closed'), or undefined while it lives. */
  get ended(): string | undefined {
    return this.#ended;
  }

  /** Calls `listener` once, when the session expires or is closed. */
  onEnd(listener: (why: string) => void): () => void {
    if (this.#ended !== undefined) {
      listener(this.#ended);
      return () => undefined;
    }
    this.#endListeners.add(listener);
    return () => this.#endListeners.delete(listener);
  }

  /** Calls `listener` on each `disconnected` / `connected` of the underlying connection. */
  onConnection(listener: (state: 'disconnected' | 'connected') => void): () => void {
    const down = () => listener('disconnected');
    const up = () => listener('connected');
    this.#client.on('disconnected', down);
    this.#client.on('connected', up);
    return () => {
      this.#client.off('disconnected', down);
      this.#client.off('connected', up);
    };
  }

  #end(why: string): void {
    if (this.#ended !== undefined) return;
    this.#ended = why;
    for (const listener of this.#endListeners) listener(why);
    this.#endListeners.clear();
  }

  /**
   * Runs one request, bounded; turns the library's failures into this package's errors. The
   * answers a caller branches on come back as ZkAnswer.
   */
  #call<T>(
    what: string,
    path: string,
    run: (done: (error: zk.ZkException | null, value?: T) => void) => void,
  ): Promise<T> {
    if (this.#ended !== undefined) {
      return Promise.reject(
        new LeaseLostError(
          STORE,
          'lease-expired',
          `${what}: the ZooKeeper session 0x${this.id} has ${this.#ended}`,
        ),
      );
    }
    return bounded(
      this.#timeoutMs,
      () =>
        new Promise<T>((resolve, reject) => {
          run((error, value) => {
            if (!error) resolve(value as T);
            else reject(this.#failure(what, path, error));
          });
        }),
    ).catch((error: unknown) => {
      if (error instanceof StoreTimeout) {
        throw new StoreUnavailableError(
          STORE,
          this.#feature,
          `${what}: no answer from ZooKeeper (${this.#where}) within ${this.#timeoutMs} ms`,
        );
      }
      throw error;
    });
  }

  #failure(what: string, path: string, error: zk.ZkException): Error {
    const name = typeof error.getName === 'function' ? error.getName() : 'UNKNOWN';
    if (EXPECTED.has(name)) return new ZkAnswer(name, path);
    if (name === 'SESSION_EXPIRED') {
      this.#end('expired');
      return new LeaseLostError(
        STORE,
        'lease-expired',
        `${what}: the ZooKeeper session 0x${this.id} expired`,
        {
          cause: error,
        },
      );
    }
    if (name === 'CONNECTION_LOSS' || name === 'OPERATION_TIMEOUT' || name === 'SESSION_MOVED') {
      return new StoreUnavailableError(
        STORE,
        this.#feature,
        `${what}: ${errorText(error)} (${this.#where})`,
        {
          cause: error,
        },
      );
    }
    return new ZkAnswer(name, path, `${what}: ZooKeeper refused it with ${name} (${errorText(error)})`, {
      cause: error,
    });
  }

  /** Creates a node; resolves with its path (with the sequence number for a sequential one). */
  create(path: string, data: string, kind: NodeKind = 'persistent'): Promise<string> {
    return this.#call(`creating ${path}`, path, (done) =>
      this.#client.create(path, Buffer.from(data), MODES[kind], (e, created) => done(e, created)),
    );
  }

  /** Creates `path` and its missing parents as persistent empty nodes; an existing node is fine. */
  mkdirp(path: string): Promise<void> {
    return this.#call(`creating ${path}`, path, (done) =>
      this.#client.mkdirp(path, null, MODES.persistent, (e) => done(e)),
    );
  }

  /** The node's data (UTF-8) and metadata, or undefined when there is no node. */
  async getData(
    path: string,
    watch?: (event: WatchEvent) => void,
  ): Promise<{ data: string; stat: NodeStat } | undefined> {
    try {
      return await this.#call(`reading ${path}`, path, (done) =>
        this.#client.getData(path, watch && this.#watcher(watch), (e, data, stat) =>
          done(e, { data: data ? data.toString('utf8') : '', stat: stat && statOf(stat) }),
        ),
      );
    } catch (error) {
      if (error instanceof ZkAnswer && error.answer === 'NO_NODE') return undefined;
      throw error;
    }
  }

  /** Sets the data if the node is at `version` (-1: any); resolves with the new metadata. */
  setData(path: string, data: string, version: number): Promise<NodeStat> {
    return this.#call(`writing ${path}`, path, (done) =>
      this.#client.setData(path, Buffer.from(data), version, (e, stat) => done(e, stat && statOf(stat))),
    );
  }

  /** The node's metadata, or undefined when there is no node; `watch` fires once on its next change. */
  exists(path: string, watch?: (event: WatchEvent) => void): Promise<NodeStat | undefined> {
    return this.#call(`looking up ${path}`, path, (done) =>
      this.#client.exists(path, watch && this.#watcher(watch), (e, stat) =>
        done(e, stat ? statOf(stat) : undefined),
      ),
    );
  }

  /** The names of the node's children (unsorted), or undefined when there is no node. */
  async getChildren(path: string, watch?: (event: WatchEvent) => void): Promise<string[] | undefined> {
    try {
      return await this.#call(`listing ${path}`, path, (done) =>
        this.#client.getChildren(path, watch && this.#watcher(watch), (e, children) => done(e, children)),
      );
    } catch (error) {
      if (error instanceof ZkAnswer && error.answer === 'NO_NODE') return undefined;
      throw error;
    }
  }

  /** Deletes the node if it is at `version` (-1: any). */
  remove(path: string, version: number): Promise<void> {
    return this.#call(`deleting ${path}`, path, (done) => this.#client.remove(path, version, (e) => done(e)));
  }

  /** Applies every operation or none; a failed check or version comes back as ZkAnswer. */
  multi(ops: readonly MultiOp[]): Promise<void> {
    const transaction = this.#client.transaction();
    for (const o of ops) {
      if (o.op === 'check') transaction.check(o.path, o.version);
      else if (o.op === 'create')
        transaction.create(o.path, Buffer.from(o.data), MODES[o.kind ?? 'persistent']);
      else transaction.setData(o.path, Buffer.from(o.data), o.version);
    }
    const path = ops.map((o) => o.path).join(', ');
    return this.#call(`a transaction on ${path}`, path, (done) => transaction.commit((e) => done(e)));
  }

  /**
   * Arms a one-shot watch on `path`; resolves, once the server has it, with the node's metadata
   * (undefined when absent) and the promise of its next event: a creation, change or deletion,
   * or the end of the session. Act on the node only after this resolves, or the event may come
   * before the watch.
   */
  async watch(path: string): Promise<{ stat: NodeStat | undefined; next: Promise<WatchEvent> }> {
    let fire: (event: WatchEvent) => void = () => undefined;
    const next = new Promise<WatchEvent>((resolve) => {
      fire = resolve;
    });
    const stop = this.onEnd(() => fire('session-ended'));
    try {
      const stat = await this.exists(path, (event) => {
        stop();
        fire(event);
      });
      return { stat, next };
    } catch (error) {
      stop();
      throw error;
    }
  }

  #watcher(watch: (event: WatchEvent) => void): (event: zk.ZkEvent) => void {
    return (event) => watch(watchEventOf(event));
  }

  /**
   * Closes the session: the server deletes its ephemeral nodes at once. Resolves once the
   * connection is closed, or after `timeoutMs` (the session then expires on the server by itself).
   */
  async close(): Promise<void> {
    if (this.#ended === 'closed') return;
    const wasLive = this.#ended === undefined;
    this.#end('closed');
    if (!wasLive || this.#client.connectionManager.state !== CONNECTED) {
      shut(this.#client);
      return;
    }
    await bounded(this.#timeoutMs, async () => {
      const gone = new Promise<void>((resolve) => this.#client.once('disconnected', () => resolve()));
      this.#client.close();
      await gone;
    }).catch(() => shut(this.#client));
  }
}
