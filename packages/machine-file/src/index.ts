// @ids/machine-file: machine IDs kept in a local file, host claims so that the processes of one
// host never share a machine ID, and the `auto` chain of named providers (explicit -> configured
// stores -> Kubernetes ordinal -> EC2 -> private IPv4 -> unique-local IPv6 -> host claim); and
// lock files, for what one process at a time may use.
export {
  type AutoMachineId,
  AutoMachineIdError,
  type AutoMachineIdOptions,
  type AutoStep,
  autoMachineId,
} from './chain.js';
export {
  claimHostMachineId,
  DEFAULT_CLAIM_RECORD_AHEAD_MS,
  DEFAULT_CLAIM_RECORD_INTERVAL_MS,
  HostClaim,
  type HostClaimOptions,
  hostClaim,
  type TakenOver,
} from './claim.js';
export { defaultClaimDir, type Env } from './dirs.js';
export {
  ClaimDirError,
  ClaimDirUnsafeError,
  FileWriteError,
  HeldFileCorruptError,
  HeldFileError,
  HeldFileInUseError,
  HeldFileLostError,
  KeptFallbackError,
  KeptFileCorruptError,
  KeptFileUnreadableError,
  KeptIdOutOfRangeError,
  NoFreeMachineIdError,
} from './errors.js';
export { type AsyncFile, type FileSystem, MAX_FILE_BYTES, nodeFileSystem } from './files.js';
export { type KeptMachineIdOptions, keptMachineId } from './kept.js';
export {
  DEFAULT_LOCK_RECORD_AHEAD_MS,
  DEFAULT_LOCK_RENEW_INTERVAL_MS,
  FileLock,
  type FileLockOptions,
  lockFile,
} from './lock.js';
export { FOREIGN_CLAIM_GRACE_MS, type ProcessTable, systemProcesses } from './process.js';
export type { ClaimRecord } from './record.js';
export {
  type AutoStepRow,
  type AutoStepsOptions,
  autoSteps,
  autoStepTable,
  type ExplicitStepOptions,
  explicitStep,
} from './steps.js';
export type { StoreFlag, StoreStepsOptions } from './store-steps.js';
