// The workspace's commands (each package.json `bin`) as a fresh clone meets them. `pnpm install`
// links every workspace package's bins into its dependents' node_modules/.bin before anything
// is built, and prints "Failed to create bin" for a target that does not exist yet (a dist/
// file). So a bin is a small committed launcher that loads the build when it runs, and says how
// to build when the build is missing. test/packaging.test.ts runs the bins installed from the
// tarballs.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeRun, root, run, type WorkspacePackage, workspacePackages } from './lib/workspace.js';

/** Each command of a package with the file it runs (`bin` as a string is named after the package). */
function binsOf(pkg: WorkspacePackage): [string, string][] {
  const bin = pkg.manifest.bin;
  if (typeof bin === 'string') return [[pkg.name.replace(/^@[^/]+\//, ''), bin]];
  return bin && typeof bin === 'object' ? Object.entries(bin as Record<string, string>) : [];
}

const commands = [...workspacePackages('packages'), ...workspacePackages('examples')].flatMap((pkg) =>
  binsOf(pkg).map(([name, file]) => ({ name, file, pkg })),
);
const scratch = mkdtempSync(join(tmpdir(), 'ids-bins-'));

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

it('finds the commands by reading the workspace manifests', () => {
  expect(commands.map((command) => command.name)).toEqual(expect.arrayContaining(['ids', 'ids-server']));
});

describe.each(commands.map((command) => [command.name, command] as const))('%s', (name, { file, pkg }) => {
  it('runs a committed file, there before any build', async () => {
    const tracked = await run('git', ['ls-files', '--error-unmatch', file], { cwd: pkg.dir });
    expect(
      tracked.status,
      describeRun(`git ls-files ${file} in ${pkg.dir.slice(root.length + 1)}`, tracked),
    ).toBe(0);
  });

  it('without the build, exits 1 naming the missing file and how to build it', async () => {
    // The launcher alone in a copy of its package's folder where no dist/ was built.
    const dir = join(scratch, name);
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: pkg.name, type: pkg.manifest.type }));
    copyFileSync(join(pkg.dir, file), join(dir, file));
    const result = await run(process.execPath, [join(dir, file), '--version'], { cwd: scratch });
    expect(result.status, describeRun(name, result)).toBe(1);
    expect(result.stdout).toBe('');
    const [said, ...more] = result.stderr.split('\n').filter(Boolean);
    expect(more, 'lines after the first').toEqual([]);
    expect(said).toMatch(
      new RegExp(`^${name}: .+ is missing: build it with pnpm --filter ${pkg.name} build$`),
    );
    expect(said!.startsWith(`${name}: ${join(dir, 'dist')}/`), said).toBe(true);
  });
});
