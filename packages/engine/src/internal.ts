// @ids/engine/internal: plumbing shared by the @ids packages (the presets, the providers, the
// CLI). Not API: it may change in any release without notice. Users import from '@ids/engine'
// or a flavour package instead.
export { closestName } from './check.js';
export { checkClock } from './clock.js';
export { createWithMachineId, type MachineIdRequest } from './construct.js';
export { received } from './errors.js';
export { toMs } from './id.js';
export { acceptMachineId, afterValue, idOf, type ResolveMode, releaseQuietly } from './machine.js';
export { importOptional, SEGMENT_STORE_CLIENTS, segmentStoreNeeds } from './optional.js';
export { type LongTimeoutOptions, setLongTimeout } from './timer.js';
