// Builds and starts the ID service: the machine pool, the token store, the routes, the HTTP
// server; and its graceful shutdown.
import { createServer, type Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { MissingPackageError } from '@ids/engine';
import { setLongTimeout } from '@ids/engine/internal';
import packageJson from '../package.json';
import type { ServerEvent } from './events.js';
import { answerClientError, createHandler } from './http.js';
import { type IdempotencyStore, redisIdempotency } from './idempotency.js';
import { createMetrics } from './metrics.js';
import { openapiDocument } from './openapi.js';
import {
  checkServerOptions,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_TOKEN_TTL_SECONDS,
  type IdServerOptions,
  type RunningIdServer,
  SHUTDOWN_GRACE_MS,
  whole,
} from './options.js';
import { inspectorRoute } from './page.js';
import { MachinePool } from './pool.js';
import type { ServerRoute } from './router.js';
import { serviceRoutes } from './routes.js';
import { segmentPlugin } from './segment.js';
import { machineIdProviders } from './sources.js';
import { redisTokenStore, type TokenStore } from './tokens.js';
/**
 * Starts the ID service.
 * @throws ServerConfigError for bad options; the machine-ID source's errors (no free ID, a bad
 * IDS_MACHINE_ID); StoreUnavailableError (`feature: 'token'`) when Redis is configured and
 * cannot be reached; the listen error (EADDRINUSE) as is. Whatever was taken before the failure is released.
 */
export async function startIdServer(options: IdServerOptions = {}): Promise<RunningIdServer> {
  const checked = checkServerOptions(options);
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const listener = options.onEvent;
  // A listener that throws is reported, not let loose in a timer or an abort handler.
  const emit = (event: ServerEvent) => {
    try {
      listener?.(event);
    } catch (error) {
      onError(error);
    }
  };
  const env = options.env ?? process.env;
  const metrics = createMetrics();
  const clock = options.clock;
  const now = clock ? () => clock.now() : () => Date.now();
  const pool = await MachinePool.open({
    layout: checked.layout,
    count: checked.machines,
    providers: machineIdProviders(options.machineIdSource ?? 'auto', {
      layout: checked.layout,
      count: checked.machines,
      env,
      machineIds: options.machineIds,
      claimDir: options.claimDir,
      etcdEndpoints: options.etcdEndpoints,
      machineIdRedisUrl: options.machineIdRedisUrl,
      redisUrl: options.redisUrl,
      zookeeperConnect: options.zookeeperConnect,
      leaseTtlSeconds: options.machineIdTtlSeconds,
      interfaces: options.interfaces,
    }),
    metrics,
    ...(clock ? { clock } : {}),
    ...(options.maxClockBackwardMs !== undefined ? { maxClockBackwardMs: options.maxClockBackwardMs } : {}),
    onError,
    ...(listener ? { onEvent: emit } : {}),
  });
  let tokens: TokenStore | undefined;
  let idempotency: IdempotencyStore | undefined;
  let idempotencyUnavailable =
    'Idempotency-Key needs a Redis: start the server with --redis or IDS_REDIS_URL';
  let server: Server | undefined;
  const plugins = [...(options.plugins ?? [])];
  try {
    if (options.redisUrl) {
      tokens = await redisTokenStore(options.redisUrl);
      try {
        idempotency = await redisIdempotency(options.redisUrl, checked.idempotencyLockTtlMs);
      } catch (error) {
        // Tokens alone do not need @ids/lock: without it the server starts, and a request with
        // the header is refused with what to install.
        if (!(error instanceof MissingPackageError)) throw error;
        idempotencyUnavailable = error.message;
      }
    }
    if (options.segmentStore) {
      plugins.push(
        await segmentPlugin({
          store: options.segmentStore,
          ...(options.segmentTags ? { tags: options.segmentTags } : {}),
          maxCount: checked.maxCount,
          onError,
          registry: metrics.registry,
        }),
      );
    }
    let shuttingDown = false;
    // Built on first request from the same declarations the router matches.
    let described: Record<string, unknown> | undefined;
    const document = () => {
      described ??= openapiDocument({
        version: packageJson.version,
        license: packageJson.license,
        auth: checked.authToken !== undefined,
        routes,
      });
      return described;
    };
    const routes: ServerRoute[] = [
      ...serviceRoutes({
        pool,
        metrics,
        maxCount: checked.maxCount,
        tokens,
        idempotency,
        idempotencyUnavailable,
        tokenTtlSeconds: whole(
          options.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS,
          'tokenTtlSeconds',
          1,
          604_800,
        ),
        openapi: document,
        shuttingDown: () => shuttingDown,
        now,
      }),
      ...plugins.flatMap((plugin) => plugin.routes ?? []),
      // Last, so that a plugin of the embedder's may serve a page of its own at `/`.
      inspectorRoute(),
    ];
    const handle = createHandler(routes, metrics, {
      token: checked.authToken,
      rateLimit: checked.rateLimit,
      maxBodyBytes: options.maxBodyBytes ?? 1024,
      now: clock ? () => clock.now() : () => performance.now(),
      onError,
      accessLog: options.accessLog ? emit : undefined,
    });
    const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const http = createServer(
      {
        requestTimeout,
        headersTimeout: requestTimeout,
        // How often Node looks for requests past those bounds (default 30 s would let a slow
        // request sit three times longer than its bound).
        connectionsCheckingInterval: Math.max(50, Math.min(1000, requestTimeout / 4)),
      },
      (req, res) => {
        if (shuttingDown) {
          // A keep-alive connection ends after this response, so shutdown does not wait for it.
          res.setHeader('connection', 'close');
        }
        void handle(req, res);
      },
    );
    server = http;
    http.on('clientError', answerClientError);
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(checked.port, checked.host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    metrics.ready.set(1);
    const address = http.address() as import('node:net').AddressInfo;
    const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    let stopping: Promise<{ clean: boolean }> | undefined;
    let endDrain: (() => void) | undefined;
    // Serving on with readiness at 503, for drainMs on the clock or until ended early.
    const drain = async (ms: number) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        endDrain = resolve;
        if (clock?.sleep) void clock.sleep(ms).then(resolve);
        else timer = setTimeout(resolve, ms);
      });
      clearTimeout(timer);
    };
    const store = tokens;
    const keys = idempotency;
    return {
      url: `http://${urlHost}:${address.port}`,
      port: address.port,
      server: http,
      pool,
      metrics,
      get ready() {
        return pool.ready && !shuttingDown;
      },
      shutdown({ drain: draining = true } = {}) {
        if (!draining) endDrain?.();
        stopping ??= (async () => {
          shuttingDown = true;
          metrics.ready.set(0);
          if (draining && checked.drainMs > 0) {
            emit({ kind: 'draining', drainMs: checked.drainMs });
            await drain(checked.drainMs);
          }
          emit({ kind: 'closing' });
          const bound = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
          let clean = true;
          await new Promise<void>((resolve) => {
            const cancelCut = setLongTimeout(() => {
              clean = false;
              http.closeAllConnections();
            }, bound);
            // Stop listening through net.Server's close: node:http's own also closes idle
            // connections at once, and one whose request was sent but not yet read looks idle.
            NetServer.prototype.close.call(http, () => {
              cancelCut();
              resolve();
            });
            // Give requests already sent a moment to be read, then close idle connections
            // (each response sent meanwhile closes its own).
            let sweep: ReturnType<typeof setInterval> | undefined;
            const cancelGrace = setLongTimeout(
              () => {
                http.closeIdleConnections();
                sweep = setInterval(() => http.closeIdleConnections(), 20);
              },
              Math.min(SHUTDOWN_GRACE_MS, bound / 2),
            );
            http.once('close', () => {
              cancelGrace();
              clearInterval(sweep);
            });
          });
          await pool.close();
          await store?.close();
          await keys?.close();
          for (const plugin of plugins) await plugin.close?.();
          return { clean };
        })();
        return stopping;
      },
    };
  } catch (error) {
    server?.close();
    await tokens?.close();
    await idempotency?.close();
    for (const plugin of plugins) await plugin.close?.();
    await pool.close();
    throw error;
  }
}
