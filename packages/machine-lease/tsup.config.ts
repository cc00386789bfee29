import { packageConfig } from '../../tsup.config.base';

// The entries share one copy of the modules (splitting), so an error class thrown through the
// internal entry is the very class the main and errors entries export.
export default packageConfig(['src/index.ts', 'src/internal.ts', 'src/errors.ts'], { splitting: true });
