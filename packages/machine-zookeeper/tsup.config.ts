import { packageConfig } from '../../tsup.config.base';

// The entries share one copy of the modules (splitting), so an error class thrown through the
// internal entry (which sibling packages use) is the very class the main entry exports.
export default packageConfig(['src/index.ts', 'src/internal.ts'], { splitting: true });
