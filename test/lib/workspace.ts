// What the workspace holds, read from disk on every run: the tests that check every package
// (packing, changelogs, README examples) iterate over this, so a package added later is covered
// without editing them.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface WorkspacePackage {
  /** The package's name, e.g. "@ids/sonyflake". */
  readonly name: string;
  readonly version: string;
  /** Absolute path of its folder. */
  readonly dir: string;
  readonly private: boolean;
  readonly manifest: Record<string, unknown>;
}

/** Every folder under `group` ("packages" or "examples") that has a package.json, by name. */
export function workspacePackages(group: 'packages' | 'examples'): WorkspacePackage[] {
  const base = join(root, group);
  if (!existsSync(base)) return [];
  return readdirSync(base, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(base, entry.name, 'package.json')))
    .map((entry) => {
      const dir = join(base, entry.name);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      return {
        name: manifest.name,
        version: manifest.version,
        dir,
        private: manifest.private === true,
        manifest,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The packages we publish: packages/* that are not private. */
export function publishedPackages(): WorkspacePackage[] {
  return workspacePackages('packages').filter((pkg) => !pkg.private);
}

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to completion without blocking the test's event loop (so runs can overlap). */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (status, signal) =>
      resolve({ status, stdout, stderr: signal ? `${stderr}\n(killed by ${signal})` : stderr }),
    );
  });
}

/** Describes a failed run for an assertion message. */
export function describeRun(what: string, result: RunResult): string {
  return `${what} exited with ${result.status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/**
 * How to call the workspace's pnpm: the `pnpm` on PATH (npm test puts the pinned one there),
 * else corepack's. Found once per process.
 */
let pnpmCache: [string, string[]] | undefined;
export function pnpmCommand(): [string, string[]] {
  if (pnpmCache) return pnpmCache;
  const onPath = spawnSync('pnpm', ['--version'], { cwd: root, encoding: 'utf8' });
  pnpmCache = onPath.status === 0 ? ['pnpm', []] : ['corepack', ['pnpm']];
  return pnpmCache;
}
