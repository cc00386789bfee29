// @ids/engine/read: reading IDs that already exist, for the tools (the `ids` CLI and the inspector
// page): text read without a chosen encoding, whether an ID is believable in a layout, and layouts
// side by side. Pure like the rest of the engine (the page bundles it), and kept off the main
// entry, which is the bit layouts and the one state machine that make IDs.
export { compareLayouts, type LayoutComparison } from './compare.js';
export { FUTURE_SLACK_MS, implausibility, NEAR_EPOCH_MS, plausibleLayouts } from './plausibility.js';
export { type DetectedId, decodeAnyId, type RecognizedId, recognizeId } from './recognize.js';
