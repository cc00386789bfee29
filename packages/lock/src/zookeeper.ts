// @ids/lock/zookeeper: the locks on ZooKeeper, by the lock recipe of ZooKeeper's documentation
// (the one Apache Curator's InterProcessMutex follows): each acquire makes an ephemeral
// sequential node `<prefix>/<name>/lock-<token>-<seq>` in a session of its own; the node with
// the lowest sequence holds the lock, and every other watches only the node just before its own
// (FIFO, no herd). The session is the lease: the server deletes the node when the holder
// releases (closes the session) or its session expires.
//
// The fence is the holder's node's czxid (the zxid of its create), not its sequence number:
// both grow with every node created under the name, but the sequence is the parent's counter and
// starts again at 0 if someone deletes and re-creates `<prefix>/<name>`, whereas a zxid is
// cluster-wide and never reused, so a fence stays above every earlier one whatever happens to
// the nodes.
import { InvalidArgumentError } from '@ids/engine';
import { DEFAULT_ZOOKEEPER_CONNECT, LeaseLostError } from '@ids/machine-zookeeper';
import {
  type ConnectString,
  isPath,
  parseConnectString,
  type SessionOptions,
  ZkAnswer,
  ZkSession,
} from '@ids/machine-zookeeper/internal';
import { type LockBackend, PlacesBackend, type Taken, type TakeRequest } from './backend.js';
import { Locks } from './locks.js';
import { checkStoreMs } from './options.js';

/** Where the locks live when no prefix is given. */
export const DEFAULT_ZOOKEEPER_LOCK_PREFIX = '/ids/lock';

/** How `zookeeperLocks` connects; every option has a default. */
export interface ZookeeperLocksOptions {
  /**
   * `host:port[,host:port...][/chroot]`. Default: the `IDS_ZOOKEEPER_CONNECT` environment
   * variable, else `127.0.0.1:2181`.
   */
  readonly connect?: string;
  /** The parent of every lock's node, an absolute path (`/a/b`, no trailing slash). Default `/ids/lock`. */
  readonly prefix?: string;
  /** The longest the connect, and then any request, may take, in ms. Default 3,000. */
  readonly timeoutMs?: number;
  /** The longest a waiter goes without re-reading the line, in case a watch was missed, in ms. Default 1,000. */
  readonly pollMs?: number;
}

/** How the backend opens a session: ZkSession.open, or a test's wrapper of it (the fault seam). */
type Open = (connect: ConnectString, options: SessionOptions) => Promise<ZkSession>;

/**
 * Opens the locks on ZooKeeper (each acquire then opens a session of its own).
 * @throws InvalidArgumentError for a bad option; StoreUnavailableError when no session was
 * granted within `timeoutMs`; ZookeeperChrootError for a chroot that does not exist.
 */
export async function zookeeperLocks(options: ZookeeperLocksOptions = {}): Promise<Locks> {
  const timeoutMs = checkStoreMs(options.timeoutMs ?? 3000, 'timeoutMs');
  const pollMs = checkStoreMs(options.pollMs ?? 1000, 'pollMs');
  const prefix = options.prefix ?? DEFAULT_ZOOKEEPER_LOCK_PREFIX;
  if (typeof prefix !== 'string' || prefix === '/' || !isPath(prefix)) {
    throw new InvalidArgumentError(
      `expected an absolute ZooKeeper path like /ids/lock (no trailing slash, no empty segment, not the root), received ${JSON.stringify(prefix)}`,
      { option: 'prefix' },
    );
  }
  const connect = parseConnectString(
    options.connect ?? process.env.IDS_ZOOKEEPER_CONNECT ?? DEFAULT_ZOOKEEPER_CONNECT,
  );
  // A test seam, like `scheduler`: wraps the session to inject faults.
  const open = (options as { openSession?: Open }).openSession ?? ((c, o) => ZkSession.open(c, o));
  // One session opened and closed now, so that a ZooKeeper that is not there is known at once
  // (StoreUnavailableError within timeoutMs), not at the first acquire, which would wait it out.
  const probe = await open(connect, { sessionTimeoutMs: 10_000, timeoutMs, feature: 'lock' });
  await probe.close();
  return new Locks(new ZookeeperBackend(connect, prefix, timeoutMs, pollMs, open), {
    timeoutMs,
    ...(options as object),
  });
}

/** One acquire's place: its session, and its node once made. */
interface Place {
  readonly session: ZkSession;
  /** The node's path, once this acquire knows it. */
  node?: string;
  /** The node's czxid: the fence, should it hold. */
  czxid?: bigint;
  /** A create was sent: its node may exist though its answer was lost. */
  sent: boolean;
  /** The node just ahead in line, and the watch armed on it. */
  ahead?: { readonly path: string; readonly gone: Promise<unknown>; fired: boolean };
}

/** The sequence ZooKeeper appended to a node's name (10 digits). */
const sequenceOf = (child: string) => Number(child.slice(child.lastIndexOf('-') + 1));

class ZookeeperBackend extends PlacesBackend<Place> implements LockBackend {
  readonly store = 'zookeeper';
  readonly #connect: ConnectString;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #pollMs: number;
  readonly #open: Open;
  /** The lock directories known to exist (created once per name, not per acquire). */
  readonly #laidOut = new Set<string>();

  constructor(connect: ConnectString, prefix: string, timeoutMs: number, pollMs: number, open: Open) {
    super();
    this.#connect = connect;
    this.#prefix = prefix;
    this.#timeoutMs = timeoutMs;
    this.#pollMs = pollMs;
    this.#open = open;
  }

  async take(request: TakeRequest): Promise<Taken | undefined> {
    const { name, token, ttlMs, budgetMs } = request;
    // The name passed checkName, whose rule includes ZooKeeper's path rules: `dir` is a path.
    const dir = `${this.#prefix}/${name}`;
    let place = this.places.get(token);
    if (place?.session.ended !== undefined) {
      // The session expired while waiting: its node went with it; join again, at the back.
      this.places.delete(token);
      await place.session.close();
      place = undefined;
    }
    place ??= await this.#session(token, ttlMs, budgetMs);
    const { session } = place;
    if (!this.#laidOut.has(dir)) await this.#layOut(session, dir);
    const stem = `lock-${token}-`;
    // The reads may be answered by a follower, but one that has applied this session's own
    // create (ZooKeeper keeps a session's reads after its writes): every node made before ours
    // is seen, so a stale view can only show a predecessor that is already gone, never miss one.
    for (;;) {
      let children = await session.getChildren(dir);
      if (place.node === undefined && place.sent) {
        // The guard against an orphan: a create whose answer was lost (the connection dropped)
        // may have made the node. Sending another would leave the first one, ephemeral of this
        // live session, ahead of us in line for good; find ours by the token in its name.
        const mine = children?.find((child) => child.startsWith(stem));
        if (mine !== undefined) place.node = `${dir}/${mine}`;
      }
      if (place.node === undefined) {
        place.sent = true;
        try {
          place.node = await session.create(`${dir}/${stem}`, '', 'ephemeral-sequential');
        } catch (error) {
          // NO_NODE: the name's node (or the prefix) was deleted since it was made, by an
          // operator tidying up empty nodes: make it again, and create once more.
          if (!(error instanceof ZkAnswer && error.answer === 'NO_NODE')) throw error;
          place.sent = false;
          await this.#layOut(session, dir);
          continue;
        }
        children = await session.getChildren(dir);
      }
      if (place.czxid === undefined) {
        const stat = await session.exists(place.node);
        if (stat) place.czxid = BigInt(`0x${stat.czxid}`);
      }
      const line = (children ?? []).sort((a, b) => sequenceOf(a) - sequenceOf(b));
      const at = line.indexOf(place.node.slice(dir.length + 1));
      if (at < 0 || place.czxid === undefined) {
        // Our node is gone though the session lives (someone deleted it): make another.
        place.node = undefined;
        place.czxid = undefined;
        place.sent = false;
        continue;
      }
      if (at === 0) {
        place.ahead = undefined;
        return { fence: place.czxid, quarantineMs: 0 };
      }
      const path = `${dir}/${line[at - 1]}`;
      // One watch per node ahead, armed again only once it fired (a change of its data).
      if (place.ahead?.path !== path || place.ahead.fired) {
        const { stat, next } = await session.watch(path);
        if (stat === undefined) continue; // it went before the watch was set: look again
        const ahead = { path, gone: next, fired: false };
        void next.then(() => {
          ahead.fired = true;
        });
        place.ahead = ahead;
      }
      return undefined;
    }
  }

  /**
   * Makes the name's node and its parents when missing. `#laidOut` only saves the look-up: a
   * create that finds the node gone (NO_NODE) calls this again, so a deleted node is made anew.
   */
  async #layOut(session: ZkSession, dir: string): Promise<void> {
    this.#laidOut.delete(dir);
    // Looked up first: mkdirp writes once per segment even when the path is there.
    if ((await session.exists(dir)) === undefined) await session.mkdirp(dir);
    this.#laidOut.add(dir);
  }

  /**
   * A session for one acquire, with the lock's TTL as its timeout. The server grants a timeout
   * within its min and max: a longer one only keeps a dead holder's node a little longer, but a
   * shorter one would let the server delete the node while the holder still trusts it.
   */
  async #session(token: string, ttlMs: number, budgetMs: number | undefined): Promise<Place> {
    // Connecting within what is left of waitMs: the session's requests keep timeoutMs.
    const connectMs = Math.min(this.#timeoutMs, budgetMs ?? this.#timeoutMs);
    const session = await this.#open(this.#connect, {
      sessionTimeoutMs: ttlMs,
      timeoutMs: this.#timeoutMs,
      connectMs,
      feature: 'lock',
    });
    if (session.timeoutMs < ttlMs) {
      const granted = session.timeoutMs;
      await session.close();
      throw new InvalidArgumentError(
        `ZooKeeper granted a session timeout of ${granted} ms for the ${ttlMs} ms asked (its maxSessionTimeout): the lock's node could be deleted while it is held; lower ttlMs or raise the server's maxSessionTimeout`,
        { option: 'ttlMs' },
      );
    }
    const place: Place = { session, sent: false };
    this.places.set(token, place);
    return place;
  }

  /**
   * A write on the holder's session that checks its node is there: ordered through the leader,
   * which refuses it once it has expired the session (a read could be answered by a follower
   * that has not heard yet). Sent at `t`, it touches the session after `t`.
   */
  async extend(_name: string, token: string): Promise<void> {
    const place = this.places.get(token);
    if (!place?.node) throw new LeaseLostError(this.store, 'released', 'the lock was released');
    try {
      await place.session.multi([{ op: 'check', path: place.node, version: -1 }]);
    } catch (error) {
      if (error instanceof ZkAnswer && error.answer === 'NO_NODE') {
        throw new LeaseLostError(this.store, 'key-lost', `the lock's node ${place.node} was deleted`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  /** Closes the acquire's session: the server deletes its node at once, and the next in line sees the delete. */
  protected async closePlace(place: Place): Promise<void> {
    await place.session.close();
  }

  /** Waits for the node just ahead to go (its watch), for a poll at most; at once on `signal`. */
  async turn(_name: string, token: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const gone = this.places.get(token)?.ahead?.gone;
    await new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        resolve();
      };
      // Without a watch (the attempt failed: ZooKeeper unreachable), a poll only.
      const timer = setTimeout(finish, this.#pollMs);
      signal.addEventListener('abort', finish, { once: true });
      void gone?.then(finish);
    });
  }

  async close(): Promise<void> {
    const places = [...this.places.values()];
    this.places.clear();
    await Promise.all(places.map((place) => place.session.close()));
  }
}
