// @ids/segment: Leaf-segment IDs (ranges from a store, served from a double buffer) on
// PostgreSQL, PGlite, MySQL or Redis, and the database-assigned machine ID. Store clients (pg,
// PGlite, mysql2, ioredis) are imported only when a store of theirs is made.

// A store that did not answer is the engine's one class for every store and feature, passed on
// so that segment users catch it without importing @ids/engine.
export { StoreUnavailableError } from '@ids/engine';
export {
  BufferEmptyError,
  InvalidTagError,
  MachineIdExhaustedError,
  SegmentsClosedError,
  StepOffsetPlanError,
  StepOutOfRangeError,
  StoreCorruptError,
  StoreSchemaError,
  StoreWentBackwardsError,
  TagExistsError,
  UnknownTagError,
} from './errors.js';
export { type MysqlSegmentStore, type MysqlStoreOptions, mysqlStore } from './mysql.js';
export type { MysqlConnection, MysqlPool } from './mysql-dialect.js';
export { openSegmentStore } from './open.js';
export {
  type PgliteStoreOptions,
  type PostgresStoreOptions,
  pgliteStore,
  postgresStore,
} from './postgres.js';
export { type RedisClient, type RedisStoreOptions, redisStore } from './redis.js';
export { PLAN_TABLE, type StepOffsetPlan } from './schemes/step-offset.js';
export {
  DEFAULT_PREFETCH_AT,
  DEFAULT_STEP,
  MAX_IDS_PER_CALL,
  Segments,
  type SegmentsOptions,
  type SegmentsStats,
} from './segments.js';
export {
  type SqlClient,
  type SqlSegmentStore,
  type SqlStoreOptions,
  sqlSegmentStore,
} from './sql.js';
export { DEFAULT_MAX_STEP, DEFAULT_TARGET_MS, nextStep, STEP_LIMIT, type StepRule } from './step.js';
export {
  type CreateTagOptions,
  checkAfter,
  checkTag,
  type SegmentRange,
  type SegmentStore,
  TAG_RULE,
} from './store.js';
export { SegmentTags, type SegmentTagsOptions } from './tags.js';
export {
  type MachineRowOptions,
  type MysqlMachineIdOptions,
  mysqlMachineId,
  type SqlMachineIdOptions,
  sqlMachineId,
} from './worker.js';
