import type { Plugin } from 'esbuild';
import { packageConfig } from '../../tsup.config.base';
import { buildPage } from './src/build/page';

// tsup runs in the package's directory (pnpm and turbo start it there).
let built: Promise<string> | undefined;

/** Resolves `virtual:inspector-page` to the page, built once for both output formats. */
const page: Plugin = {
  name: 'inspector-page',
  setup(build) {
    build.onResolve({ filter: /^virtual:inspector-page$/ }, (args) => ({
      path: args.path,
      namespace: 'inspector-page',
    }));
    build.onLoad({ filter: /.*/, namespace: 'inspector-page' }, async () => {
      built ??= buildPage(process.cwd()).then((p) => p.html);
      return { contents: `export default ${JSON.stringify(await built)};`, loader: 'js' };
    });
  },
};

export default packageConfig(['src/index.ts'], { esbuildPlugins: [page] });
