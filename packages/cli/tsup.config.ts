import { packageConfig } from '../../tsup.config.base';

// Split: each command is a chunk of its own, loaded when it runs (src/run.ts), and main.js alone
// answers `ids --version`.
export default packageConfig(['src/index.ts', 'src/main.ts'], { splitting: true });
