// The ID service's options: their defaults, their ranges, and the check that runs before anything
// starts (startIdServer and the command line both use it).
import type { Server } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import type { Clock, Layout, MachineIdProvider } from '@ids/engine';
import { checkInteger } from '@ids/engine/internal';
import type { Env } from '@ids/machine-file';
import type { InterfaceSource } from '@ids/machine-ip';
import { ServerConfigError } from './errors.js';
import type { ServerEvent } from './events.js';
import { IDEMPOTENCY_LOCK_TTL_MS } from './idempotency.js';
import { layoutNamed } from './layouts.js';
import type { ServerMetrics } from './metrics.js';
import type { MachinePool } from './pool.js';
import type { ServerPlugin } from './router.js';
import { machineIdSourceNamed } from './sources.js';
/** Default bound on N in `/ids?count=N`: 1000 Sonyflake IDs take up to ~40 ms of one generator. */
export const DEFAULT_MAX_COUNT = 1000;
/** The largest `maxCount` accepted. */
export const MAX_COUNT_LIMIT = 100_000;
/** Default per-client rate limit (requests/s) on a non-loopback address when none is given. */
export const DEFAULT_PUBLIC_RATE_LIMIT = 1000;
/** Default token TTL, in seconds. */
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;
/** Default time for a request to arrive whole before it is answered 408, in ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** How long a shutdown lets requests already sent arrive before it closes idle connections, in ms. */
export const SHUTDOWN_GRACE_MS = 250;
/** Default bound on a graceful shutdown, in ms. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/**
 * `ids-server`'s default drain, in ms: how long it keeps serving after SIGTERM with readiness at
 * 503. Kubernetes takes a terminating pod out of its endpoints at once, but kube-proxy, ingress
 * controllers and load balancers learn of it over the next few seconds and route to it meanwhile.
 */
export const DEFAULT_DRAIN_MS = 5000;
/** The longest drain accepted, in ms. */
export const MAX_DRAIN_MS = 600_000;

/** How the server is configured; every option has a default safe on a laptop. */
export interface IdServerOptions {
  /** Address to listen on. Default 127.0.0.1 (loopback only). */
  readonly host?: string;
  /** TCP port, 0 to 65535; 0 picks a free one. Default 8080. */
  readonly port?: number;
  /** A layout name (see the engine's NAMED_LAYOUTS) or a layout. Default `sonyflake`. */
  readonly layout?: string | Layout;
  /** Generators (machine IDs) in this process, 1 to 64. Default: as many as `machineIds`, else 1. */
  readonly machines?: number;
  /**
   * Where the machine IDs come from: a source's name (see `machineIdSources`), or a provider of
   * your own, called once per generator and again for a re-claim. Default `auto`.
   */
  readonly machineIdSource?: string | MachineIdProvider;
  /** Explicit machine IDs, one per generator. */
  readonly machineIds?: readonly number[];
  /** The host-claim directory. Default: IDS_CLAIM_DIR, else the user's state directory. */
  readonly claimDir?: string;
  /** etcd endpoints for the etcd source. Default: IDS_ETCD_ENDPOINTS, else etcd's default. */
  readonly etcdEndpoints?: readonly string[];
  /**
   * The Redis of the redis machine-ID source. Default: `redisUrl` (the same Redis as the tokens),
   * else IDS_REDIS_URL.
   */
  readonly machineIdRedisUrl?: string;
  /** The ZooKeeper of the zookeeper machine-ID source (`host:port[,...][/chroot]`). Default: IDS_ZOOKEEPER_CONNECT, else 127.0.0.1:2181. */
  readonly zookeeperConnect?: string;
  /** TTL in seconds of the redis and zookeeper sources' claims (1 to 86,400). Default 10. */
  readonly machineIdTtlSeconds?: number;
  /**
   * The segment store (`pglite:<dir>`, `postgres://...`, `mysql://...`, `redis://...`); with it the segment
   * routes by tag exist. `@ids/segment` is loaded only then.
   */
  readonly segmentStore?: string;
  /**
   * Tags whose first segment is fetched at start. Never created (that is `ids segment
   * create-tag`, run once): a missing one is reported through `onError`, and answers 404.
   */
  readonly segmentTags?: readonly string[];
  /** The interface list for the private-IPv4 step (tests inject one). */
  readonly interfaces?: InterfaceSource;
  /** Where sources read their environment. Default process.env. */
  readonly env?: Env;
  /** The bearer token clients must send (every route but /health/*, /openapi.json and the page at /). */
  readonly authToken?: string;
  /** Start on a non-loopback address without a token (behind a proxy that authenticates). Default false. */
  readonly allowUnauthenticated?: boolean;
  /**
   * Requests per second per client address (a token bucket with a burst of the same size).
   * Default: none on loopback, DEFAULT_PUBLIC_RATE_LIMIT elsewhere; 0 turns it off.
   */
  readonly rateLimit?: number;
  /** Bound on N in /ids?count=N, 1 to MAX_COUNT_LIMIT. Default DEFAULT_MAX_COUNT. */
  readonly maxCount?: number;
  /** Largest request body accepted, in bytes (the routes take none). Default 1024. */
  readonly maxBodyBytes?: number;
  /** A request must have arrived whole within this many ms, else 408. Default DEFAULT_REQUEST_TIMEOUT_MS. */
  readonly requestTimeoutMs?: number;
  /**
   * Redis for idempotency tokens (`redis://host:port`) and for Idempotency-Key on GET /ids (with
   * @ids/lock installed); without it the /tokens routes do not exist and the header is refused.
   */
  readonly redisUrl?: string;
  /** Default TTL of a token, in seconds. Default DEFAULT_TOKEN_TTL_SECONDS. */
  readonly tokenTtlSeconds?: number;
  /**
   * The lease of an Idempotency-Key's lock while its batch runs, in ms: 100 (@ids/lock's
   * shortest lease) to 3,600,000. Default IDEMPOTENCY_LOCK_TTL_MS (5,000).
   */
  readonly idempotencyLockTtlMs?: number;
  /**
   * The generators' clock, also the rate limit's and the drain's (tests inject a FakeClock).
   * Default: the wall clock.
   */
  readonly clock?: Clock;
  /** The generators' `maxClockBackwardMs`. Default 1000. */
  readonly maxClockBackwardMs?: number;
  /** Bound on a graceful shutdown, in ms, counted from the end of the drain. Default DEFAULT_SHUTDOWN_TIMEOUT_MS. */
  readonly shutdownTimeoutMs?: number;
  /**
   * How long `shutdown()` keeps serving with readiness at 503 before it stops accepting, in ms
   * (0 to MAX_DRAIN_MS), so that load balancers following readiness move away first. Default 0
   * here; `ids-server` defaults to DEFAULT_DRAIN_MS.
   */
  readonly drainMs?: number;
  /** Report each request to `onEvent` once answered (`kind: 'request'`). Default false. */
  readonly accessLog?: boolean;
  /**
   * Receives what happens besides errors: a claim lost and recovered, the drain and the close,
   * and with `accessLog` each request. Without it, a lost claim's reason goes to `onError`.
   */
  readonly onEvent?: (event: ServerEvent) => void;
  /** Routes other packages add (segment IDs, the inspector page at `/`). */
  readonly plugins?: readonly ServerPlugin[];
  /** Receives unexpected and background errors. Default console.error. */
  readonly onError?: (error: unknown) => void;
}

/** A started server. */
export interface RunningIdServer {
  /** Base URL, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** The node:http server. */
  readonly server: Server;
  /** The generators. */
  readonly pool: MachinePool;
  /** The metrics registry and its metrics. */
  readonly metrics: ServerMetrics;
  /** Whether /health/ready answers 200 now. */
  readonly ready: boolean;
  /**
   * Graceful shutdown: readiness goes false at once and, for `drainMs` on the clock, requests are
   * still served (each connection closes after its answer). Then no new connections, requests
   * in flight finish, the generators close (recorded time written, claims released) and the
   * token store disconnects. Past `shutdownTimeoutMs` after the drain the remaining connections
   * are cut, and it resolves with `clean: false`. Safe to call again: it returns the same
   * promise, and `{ drain: false }` (skip the drain) ends a drain under way.
   */
  shutdown(options?: {
    /** Whether to drain first. Default true. */
    readonly drain?: boolean;
  }): Promise<{ clean: boolean }>;
}

/** Whether a host string names a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost') return true;
  if (isIPv4(bare)) return bare.startsWith('127.');
  if (isIPv6(bare)) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}

/** An integer option from `low` to `high` (the engine's check), else ServerConfigError. */
export function whole(value: unknown, what: string, low: number, high: number): number {
  return checkInteger(value, what, low, high, (at, expected) => new ServerConfigError(`${at}: ${expected}`));
}

/** The options checked and completed. */
export interface CheckedOptions {
  /** The address to listen on. */
  readonly host: string;
  /** The port (0: a free one). */
  readonly port: number;
  /** The layout of every generator. */
  readonly layout: Layout;
  /** How many generators. */
  readonly machines: number;
  /** The bound on /ids?count=N. */
  readonly maxCount: number;
  /** Requests per second per client, or undefined for no limit. */
  readonly rateLimit: number | undefined;
  /** The bearer token required, or undefined for none. */
  readonly authToken: string | undefined;
  /** How long a shutdown drains, in ms. */
  readonly drainMs: number;
  /** The lease of an Idempotency-Key's lock, in ms. */
  readonly idempotencyLockTtlMs: number;
}

/**
 * Checks the options without starting anything: the values' ranges, the layout and source
 * names, and the address rule. On a non-loopback address a bearer token is required (or
 * `allowUnauthenticated`), and the rate limit is on by default.
 * @throws ServerConfigError saying what was expected and received.
 */
export function checkServerOptions(options: IdServerOptions): CheckedOptions {
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '')
    throw new ServerConfigError(`host: expected an address, received ${JSON.stringify(host)}`);
  const port = whole(options.port ?? 8080, 'port', 0, 65535);
  const layout =
    typeof options.layout === 'object' ? options.layout : layoutNamed(options.layout ?? 'sonyflake');
  const machines = whole(options.machines ?? (options.machineIds?.length || 1), 'machines', 1, 64);
  const maxCount = whole(options.maxCount ?? DEFAULT_MAX_COUNT, 'maxCount', 1, MAX_COUNT_LIMIT);
  if (typeof options.machineIdSource !== 'function') machineIdSourceNamed(options.machineIdSource ?? 'auto');
  if (options.machineIdTtlSeconds !== undefined) {
    whole(options.machineIdTtlSeconds, 'machineIdTtlSeconds', 1, 86_400);
  }
  const token = options.authToken === '' ? undefined : options.authToken;
  if (token !== undefined && (token.length < 16 || /\s/.test(token))) {
    throw new ServerConfigError(
      'auth token: expected at least 16 characters without spaces, received a shorter one',
    );
  }
  const loopback = isLoopbackHost(host);
  if (!loopback && token === undefined && options.allowUnauthenticated !== true) {
    throw new ServerConfigError(
      `host ${JSON.stringify(host)} is not a loopback address: expected an auth token (IDS_AUTH_TOKEN or --auth-token-file) so that only your clients take IDs, or IDS_ALLOW_UNAUTHENTICATED=1 when a proxy in front authenticates`,
    );
  }
  const limit = options.rateLimit ?? (loopback ? 0 : DEFAULT_PUBLIC_RATE_LIMIT);
  whole(limit, 'rateLimit', 0, 10_000_000);
  const drainMs = whole(options.drainMs ?? 0, 'drainMs', 0, MAX_DRAIN_MS);
  const idempotencyLockTtlMs = whole(
    options.idempotencyLockTtlMs ?? IDEMPOTENCY_LOCK_TTL_MS,
    'idempotencyLockTtlMs',
    100,
    3_600_000,
  );
  return {
    host,
    port,
    layout,
    machines,
    maxCount,
    rateLimit: limit === 0 ? undefined : limit,
    authToken: token,
    drainMs,
    idempotencyLockTtlMs,
  };
}
