import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { IdsError, MissingPackageError } from '../src/errors.js';
import { importOptional } from '../src/optional.js';
import { segmentStoreNeeds } from '../src/stores.js';

// Real imports of packages that are not installed, from ESM (import()) and from CommonJS
// (require), as the published builds do them.
const require = createRequire(import.meta.url);
const missing = '@ids-test/not-installed';

describe('importOptional', () => {
  it('returns the module when the package is installed', async () => {
    const vitest = await importOptional('vitest', () => import('vitest'), 'the tests');
    expect(typeof vitest.it).toBe('function');
  });

  it.each([
    ['import()', () => import(missing)],
    ['require', async () => require(missing)],
    ['require of a subpath', async () => require(`${missing}/sub`)],
  ])(
    'turns a missing package (%s) into MissingPackageError naming it and what it is for',
    async (_how, load) => {
      const error = await importOptional(missing, load, 'a redis:// segment store', [
        '@ids/machine-redis',
      ]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MissingPackageError);
      expect(error).toBeInstanceOf(IdsError);
      expect(error).toMatchObject({
        code: 'ERR_IDS_MISSING_PACKAGE',
        name: 'MissingPackageError',
        packages: [missing, '@ids/machine-redis'],
      });
      expect((error as Error).message).toBe(
        `install ${missing} (and @ids/machine-redis) to use a redis:// segment store: ${missing} is not installed`,
      );
      expect((error as Error).cause).toMatchObject({ code: expect.stringMatching(/MODULE_NOT_FOUND/) });
    },
  );

  it('rethrows as is a package missing further down (not the one asked for), and any other failure', async () => {
    const nested = await importOptional('pg', () => import(missing), 'postgres').catch((e: unknown) => e);
    expect(nested).not.toBeInstanceOf(MissingPackageError);
    expect((nested as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND');
    // A name that only starts like the missing one is another package.
    const prefix = await importOptional('@ids-test/not', () => import(missing), 'x').catch((e: unknown) => e);
    expect(prefix).not.toBeInstanceOf(MissingPackageError);
    const broken = new Error('boom');
    await expect(importOptional(missing, () => Promise.reject(broken), 'x')).rejects.toBe(broken);
  });
});

describe('segmentStoreNeeds', () => {
  it('names the client each store string needs beside @ids/segment', () => {
    expect(segmentStoreNeeds('redis://127.0.0.1:6379')).toEqual({
      use: 'a redis:// segment store',
      also: ['@ids/machine-redis'],
    });
    expect(segmentStoreNeeds('postgresql://127.0.0.1/ids').also).toEqual(['pg']);
    expect(segmentStoreNeeds('pglite:./data').also).toEqual(['@electric-sql/pglite']);
    expect(segmentStoreNeeds('ftp://x')).toEqual({ use: 'a segment store', also: [] });
  });
});
