// Every package we publish has a CHANGELOG.md whose newest entry is its current version, in the
// shape `changeset version` writes (so later releases append to it cleanly). A new package
// starts with a hand-written entry for its first version: see CONTRIBUTING.md.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishedPackages, root } from './lib/workspace.js';

describe.each(publishedPackages().map((pkg) => [pkg.name, pkg] as const))('%s', (name, pkg) => {
  it('has a CHANGELOG.md whose newest entry is its version', () => {
    const file = join(pkg.dir, 'CHANGELOG.md');
    expect(existsSync(file), `${file} (see CONTRIBUTING.md: a new package adds its first entry)`).toBe(true);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toBe(`# ${name}`);
    const versions = [...text.matchAll(/^## (\S+)$/gm)].map((match) => match[1]);
    expect(versions[0], 'the newest entry').toBe(pkg.version);
    const newest = text.slice(text.indexOf(`## ${pkg.version}`)).split(/^## /m)[1] ?? '';
    expect(newest, 'the entry names its kind of change and has at least one item').toMatch(
      /^### (Major|Minor|Patch) Changes\n\n- \S/m,
    );
  });
});

it('configures changesets to publish the scoped packages publicly and to skip private ones', () => {
  const config = JSON.parse(readFileSync(join(root, '.changeset', 'config.json'), 'utf8'));
  expect(config.access).toBe('public');
  expect(config.baseBranch).toBe('main');
  expect(config.privatePackages).toEqual({ version: false, tag: false });
});
