// @ids/server: the ID service an operator deploys. `ids-server` runs it; `startIdServer` embeds it.

export { type ServeIo, serve } from './command.js';
export {
  type LogFormat,
  type LogLevel,
  type LogSettings,
  type ParsedCommandLine,
  parseServerArgs,
  readLogSettings,
  serverHelp,
} from './config.js';
export { HttpError, ServerConfigError } from './errors.js';
export type {
  ClaimLostEvent,
  ClaimRecoveredEvent,
  ClosingEvent,
  DrainingEvent,
  RequestEvent,
  ServerEvent,
} from './events.js';
export type { ServerMetrics } from './metrics.js';
export {
  type CheckedOptions,
  checkServerOptions,
  DEFAULT_DRAIN_MS,
  DEFAULT_MAX_COUNT,
  DEFAULT_PUBLIC_RATE_LIMIT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_TOKEN_TTL_SECONDS,
  type IdServerOptions,
  isLoopbackHost,
  MAX_COUNT_LIMIT,
  MAX_DRAIN_MS,
  type RunningIdServer,
} from './options.js';
export { MachinePool, type PoolOptions, type PoolSlot, type SlotState } from './pool.js';
export type {
  RouteParameter,
  RouteParams,
  RouteReply,
  RouteRequest,
  ServerPlugin,
  ServerRoute,
} from './router.js';
export { machineIdSources } from './sources.js';
export { startIdServer } from './start.js';
export {
  type ConsumeOutcome,
  DEFAULT_TOKEN_PREFIX,
  type RedisTokenStoreOptions,
  redisTokenStore,
  type TokenStore,
} from './tokens.js';
