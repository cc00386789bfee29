// @ids/engine/flavour: what every flavour package (@ids/sonyflake, @ids/snowflake) passes on from
// the engine to its users, listed once; each flavour's index adds only its own class, settings,
// layouts and ID helpers. The encodings, the test clock, shared state for threads, and every error
// a generator's methods or the flavour's functions can throw (test/flavour-errors.test.ts walks
// the throw sites); every error extends IdsError and has a stable `code`. The errors thrown only
// while the constructor or `create()` checks settings and finds the machine ID come from
// '@ids/engine', with the engine's layout-first helpers, the encoding names and the machine-ID
// provider types; reading text of an unknown encoding (`decodeAnyId`) is '@ids/engine/read'.
export {
  ClockMovedBackwardsError,
  ClockStalledError,
  createSharedState,
  DuplicateGeneratorError,
  decodeId,
  encodeId,
  FakeClock,
  GeneratorClosedError,
  IdsError,
  InvalidArgumentError,
  InvalidIdError,
  InvalidMachineIdError,
  InvalidSequenceError,
  MachineIdLostError,
  MachineIdProviderError,
  OverTimeLimitError,
  StartTimeAheadError,
  sharedStateCell,
} from './index.js';
