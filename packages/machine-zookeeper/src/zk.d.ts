// The part of node-zookeeper-client (1.1.3, no types of its own) that client.ts, nodes.ts and
// connection.ts use.
declare module 'node-zookeeper-client' {
  import type { EventEmitter } from 'node:events';

  export interface Stat {
    czxid: Buffer;
    mzxid: Buffer;
    version: number;
    cversion: number;
    ephemeralOwner: Buffer;
    dataLength: number;
    numChildren: number;
  }
  export interface ZkException extends Error {
    getCode(): number;
    getName(): string;
  }
  export interface ZkEvent {
    getType(): number;
    getName(): string;
    getPath(): string;
  }
  type Done<T> = (error: ZkException | null, result: T, stat: Stat) => void;
  export interface Transaction {
    create(path: string, data: Buffer | null, mode: number): Transaction;
    check(path: string, version: number): Transaction;
    setData(path: string, data: Buffer | null, version: number): Transaction;
    remove(path: string, version: number): Transaction;
    commit(callback: (error: ZkException | null, results: unknown) => void): void;
  }
  /** Internal to the library; connection.ts touches it to set the servers dialled (see `dialEndpoints`) and to abandon a connection (see `abandon`). */
  export interface ConnectionManager {
    state: number;
    /** The servers it dials in turn, each passed to `net.connect` as is (see `dialEndpoints`). */
    servers: { host: string; port: number }[];
    socket?: { destroy(): void };
    connect(): void;
    setState(state: number): void;
  }
  export interface Client extends EventEmitter {
    connectionManager: ConnectionManager;
    connect(): void;
    close(): void;
    getSessionId(): Buffer;
    getSessionTimeout(): number;
    create(path: string, data: Buffer | null, mode: number, callback: Done<string>): void;
    remove(path: string, version: number, callback: (error: ZkException | null) => void): void;
    setData(path: string, data: Buffer | null, version: number, callback: Done<Stat>): void;
    getData(
      path: string,
      watcher: ((event: ZkEvent) => void) | undefined,
      callback: Done<Buffer | null>,
    ): void;
    exists(path: string, watcher: ((event: ZkEvent) => void) | undefined, callback: Done<Stat | null>): void;
    getChildren(
      path: string,
      watcher: ((event: ZkEvent) => void) | undefined,
      callback: Done<string[]>,
    ): void;
    mkdirp(path: string, data: Buffer | null, mode: number, callback: Done<string>): void;
    transaction(): Transaction;
  }
  export function createClient(
    connectionString: string,
    options?: { sessionTimeout?: number; spinDelay?: number; retries?: number },
  ): Client;
  export const CreateMode: { PERSISTENT: 0; PERSISTENT_SEQUENTIAL: 2; EPHEMERAL: 1; EPHEMERAL_SEQUENTIAL: 3 };
  export const Event: { NODE_CREATED: 1; NODE_DELETED: 2; NODE_DATA_CHANGED: 3; NODE_CHILDREN_CHANGED: 4 };
}
