// @ids/engine: bit layouts, the one generator state machine, clocks, waits and errors.
// The pure state machine (state.ts) is deliberately not exported here: it is an implementation
// detail tested from its own module; generators are the public way to drive it. Its state type
// is exported for StateCell implementations. This entry holds what authors of layouts, presets
// and machine-ID providers need; plumbing for the sibling packages (option checks, layout maths,
// timers, the preset-class pattern the flavours are made with) is exported from './internal.ts'
// (the '@ids/engine/internal' subpath), which is not API. Reading existing IDs (recognizing text,
// plausibility, layouts side by side) is the '@ids/engine/read' subpath, for the tools.
export {
  type Clock,
  FakeClock,
  type FakeClockOptions,
  hiResWallClock,
  monotonicClock,
  type TimeSources,
  wallClock,
} from './clock.js';
export { DuplicateGeneratorError, type SameMachineIdSetting } from './duplicate-guard.js';
export {
  decodeId,
  ENCODING_NAMES,
  ENCODINGS,
  type EncodingName,
  encodeId,
  type IdEncoding,
  idFromBytes,
  idToBytes,
} from './encodings.js';
// Listed rather than `export *`, which would also export `received` (plumbing): a new error class
// is added here too.
export {
  AmbiguousIdError,
  AsyncSettingError,
  ClockMovedBackwardsError,
  ClockStalledError,
  GeneratorClosedError,
  IdsError,
  InvalidArgumentError,
  InvalidBitsMachineIdError,
  InvalidBitsSequenceError,
  InvalidBitsTimeError,
  InvalidIdError,
  InvalidLayoutError,
  InvalidMachineIdError,
  InvalidSequenceError,
  InvalidStartTimeError,
  InvalidTimeUnitError,
  MachineIdLostError,
  MachineIdProviderError,
  MachineIdRejectedError,
  MissingPackageError,
  OverTimeLimitError,
  StartTimeAheadError,
  StoreUnavailableError,
} from './errors.js';

import type { CheckedGeneratorOptions as CheckedOptions } from './options.js';
/**
 * The settings an IdGenerator runs on, each checked once: made only by `checkGeneratorOptions`
 * and the presets. A type only: the class behind it is not exported, so nothing else makes one.
 */
export type CheckedGeneratorOptions = CheckedOptions;

export {
  checkGeneratorOptions,
  DEFAULT_MAX_CLOCK_BACKWARD_MS,
  DEFAULT_RECORD_INTERVAL_MS,
  type GeneratorOptions,
  type GeneratorSettings,
  IdGenerator,
  MAX_BATCH,
  type StateCell,
} from './generator.js';
export {
  checkMachineId,
  composeIn,
  composeMachineId,
  type DecomposedId,
  decomposeIn,
  formatId,
  type IdInput,
  idReplacer,
  MAX_ID,
  parseId,
  toTimeIn,
} from './id.js';
export {
  type DecimalLength,
  defineLayout,
  type FieldOrder,
  type Layout,
  type LayoutLimits,
  type LayoutSpec,
  layoutLimits,
  type MachinePart,
  tickStartMs,
} from './layout.js';
export {
  isClaim,
  type MachineIdCheck,
  type MachineIdClaim,
  type MachineIdContext,
  type MachineIdProvider,
  type MachineIdSource,
  type NamedMachineIdProvider,
  NoMachineIdHereError,
  resolveMachineId,
  resolveMachineIdSync,
} from './machine.js';
export { LAYOUT_NAMES, NAMED_LAYOUTS, type NamedLayout, namedLayout } from './named-layouts.js';
export {
  createSharedState,
  type SharedGeneratorState,
  SharedStateCell,
  sharedStateCell,
} from './shared.js';
export type { GeneratorState, Slot } from './state.js';
export type { GeneratorView } from './view.js';
