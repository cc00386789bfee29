// @ids/engine/flavour: what every flavour package (@ids/sonyflake, @ids/snowflake) passes on from
// the engine to its users, listed once; each flavour's index adds only its own class, settings,
// layouts and ID helpers. The encodings, the test clock, shared state for threads, and the errors
// a caller can act on (every error extends IdsError and has a stable `code`; the rest, such as
// the settings errors thrown at construction, come from '@ids/engine' with the engine's
// layout-first helpers and the machine-ID provider types).
export {
  ClockMovedBackwardsError,
  createSharedState,
  DuplicateGeneratorError,
  decodeAnyId,
  decodeId,
  type EncodingName,
  encodeId,
  FakeClock,
  GeneratorClosedError,
  IdsError,
  InvalidArgumentError,
  InvalidIdError,
  InvalidMachineIdError,
  MachineIdLostError,
  MachineIdProviderError,
  OverTimeLimitError,
  sharedStateCell,
} from './index.js';
