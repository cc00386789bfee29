import { packageConfig } from '../../tsup.config.base';

// The renewal thread runs a file of its own (see src/renewal.ts), found beside the index through
// import.meta.url, which the shims give the CommonJS build too. Only the index has a public API.
export default packageConfig(['src/index.ts', 'src/renewal-worker.ts'], {
  shims: true,
  dts: { entry: 'src/index.ts' },
});
