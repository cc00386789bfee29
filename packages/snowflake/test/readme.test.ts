import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const packageDir = join(__dirname, '..');

describe('README', () => {
  it('the quick-start example runs against the built package and prints what it says', () => {
    const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
    const example = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("from '@ids/snowflake'");
    // Run from the package directory: Node resolves '@ids/snowflake' to this package's dist.
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', example!], {
      cwd: packageDir,
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^\d{19}n [0-9A-Z]{13}$/);
    expect(run.stdout).toMatch(/machine: 39,\s+parts: \{ datacenter: 1, worker: 7 \}/);
    expect(new Date(lines.at(-1)!).getTime()).toBeGreaterThan(Date.UTC(2025, 0, 1));
  });
});
