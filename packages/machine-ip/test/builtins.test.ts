import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { builtin } from '../src/builtins.js';

// The providers load node:fs, node:http and node:os on first use (test/cold-start.test.ts shows
// that an import does not). These are the very modules a static import gives, on Node with
// process.getBuiltinModule (20.16 and later) and, through require, on Node before it.
describe('builtin', () => {
  const getBuiltinModule = process.getBuiltinModule;
  afterEach(() => {
    process.getBuiltinModule = getBuiltinModule;
  });

  it.each([
    ['with process.getBuiltinModule', true],
    ['without it (Node before 20.16)', false],
  ])('gives the modules a static import gives, %s', (_, present) => {
    if (!present) (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
    expect(builtin('node:fs').readFileSync).toBe(fs.readFileSync);
    expect(builtin('node:http').request).toBe(http.request);
    expect(builtin('node:os').networkInterfaces).toBe(os.networkInterfaces);
  });
});
