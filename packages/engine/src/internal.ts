// @ids/engine/internal: plumbing shared by the @ids packages (the presets, the providers, the
// CLI, the server): option checks, layout maths, timers. Not API: it may change in any release
// without notice. Users import from '@ids/engine' or a flavour package instead.
export {
  type CheckFailure,
  checkInteger,
  checkNonNegative,
  checkOnError,
  checkSettingsObject,
  checkStartTime,
  closestName,
  errorText,
  invalidArgument,
  warnError,
} from './check.js';
export { checkClock, clockOption, type SleepOptions, sleep, sleepSync } from './clock.js';
export {
  HELP_WIDTH,
  joinNegativeValues,
  type OptionSpec,
  optionErrorText,
  wrapWords,
} from './command-line.js';
export { received } from './errors.js';
export { type LayoutIdFunctions, layoutIdFunctions, toMs } from './id.js';
export { checkFieldBits, defineCheckedFields, layoutShape, maxTimeBits, tickOf } from './layout.js';
export { acceptMachineId, afterValue, idOf, type ResolveMode, releaseQuietly } from './machine.js';
export {
  envMachineIds,
  MACHINE_ID_ENV,
  type MachineIdLimits,
  parseMachineIds,
} from './machine-env.js';
export { importOptional } from './optional.js';
export { type MachineIdRequest, type Preset, type PresetClass, presetClass } from './preset.js';
export {
  type MachineIdStore,
  machineIdStores,
  STORES,
  type StoreEntry,
  type StoreFeature,
  type StoreName,
  segmentStoreNeeds,
  storeFor,
  storeForms,
} from './stores.js';
export { type LongTimeoutOptions, setLongTimeout, TIMER_MAX_MS, type TimerHost } from './timer.js';
