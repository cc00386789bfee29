// For the tests that run the library as an application would, with a store package installed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../helpers.js';
import { root } from './workspace.js';

/**
 * `node --import` arguments that let a program find an @ids store package the way an
 * application that installed it does. In this workspace @ids/machine-file (which imports a
 * store's package by name) has no store package beside it, by design: the store packages depend
 * on it through their tests. An application's own node_modules holds the package it installed,
 * and Node finds it from any package there; here the hook retries a bare @ids/ specifier that
 * was not found from this test package, which depends on the store packages.
 */
export function applicationResolution(): string[] {
  const dir = tempDir('chain-hooks-');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `const application = ${JSON.stringify(pathToFileURL(join(root, 'test', 'package.json')).href)};
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !specifier.startsWith('@ids/')) throw error;
    return next(specifier, { ...context, parentURL: application });
  }
}
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  return ['--import', pathToFileURL(register).href];
}
