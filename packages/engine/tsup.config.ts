import { packageConfig } from '../../tsup.config.base';

// The entries share one copy of the modules (splitting), so an error class thrown through the
// internal entry, or passed on by a flavour, is the very class the main entry exports.
export default packageConfig(['src/index.ts', 'src/flavour.ts', 'src/internal.ts', 'src/read.ts'], {
  splitting: true,
});
