import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

// @ids/machine-file's README examples, run as they are against the built packages. Here rather
// than in that package: they use @ids/sonyflake, which depends on @ids/machine-file.
const readme = readFileSync(join(__dirname, '..', 'packages', 'machine-file', 'README.md'), 'utf8');
const examples = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);

function runExample(code: string, name: string) {
  // Inside this package, so that '@ids/machine-file' and '@ids/sonyflake' resolve.
  const file = join(__dirname, `.readme-${name}.mjs`);
  writeFileSync(file, code);
  try {
    const dir = tempDir('readme');
    const { IDS_MACHINE_ID: _, ...env } = process.env;
    return spawnSync(process.execPath, [file], { env: { ...env, IDS_CLAIM_DIR: dir }, encoding: 'utf8' });
  } finally {
    rmSync(file, { force: true });
  }
}

describe('@ids/machine-file README examples', () => {
  it('has the two examples', () => {
    expect(examples).toHaveLength(2);
  });

  it('the auto chain example explains its choice and prints an ID', () => {
    const run = runExample(examples[0]!, 'auto');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^1\. explicit ID: skipped/);
    expect(run.stdout).toMatch(/\n\d{15,}n\n$/);
  });

  it('the threads example prints one ID per thread, all distinct', () => {
    const run = runExample(examples[1]!, 'threads');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const ids = run.stdout.trim().split('\n');
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
  });
});
