// No two workspace packages may depend on each other, directly or through others: pnpm warns
// about such a cycle on every install, and it makes the build order of the pair arbitrary. Every
// kind of dependency counts (dependencies, peerDependencies, devDependencies), as it does for
// pnpm. Read from the manifests on every run, so a package added later is covered.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, workspacePackages } from './lib/workspace.js';

type Manifest = Record<string, unknown>;

/** Every workspace package's manifest: packages/*, examples/*, and the test packages. */
function manifests(): Manifest[] {
  const others = ['test', join('test', 'bench'), join('test', 'services')]
    .map((dir) => join(root, dir, 'package.json'))
    .filter((file) => existsSync(file))
    .map((file) => JSON.parse(readFileSync(file, 'utf8')) as Manifest);
  return [...workspacePackages('packages'), ...workspacePackages('examples')]
    .map((pkg) => pkg.manifest)
    .concat(others);
}

/** Each package's workspace dependencies of every kind. */
export function dependencyGraph(all: readonly Manifest[]): Map<string, string[]> {
  const names = new Set(all.map((m) => m.name as string));
  const kinds = ['dependencies', 'peerDependencies', 'devDependencies', 'optionalDependencies'];
  return new Map(
    all.map((m) => {
      const deps = kinds.flatMap((kind) => Object.keys((m[kind] as Record<string, string>) ?? {}));
      return [m.name as string, [...new Set(deps.filter((d) => names.has(d) && d !== m.name))].sort()];
    }),
  );
}

/** The cycles of a graph, each as the path that closes it (`a -> b -> a`), found by depth-first search. */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (name: string) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'open') {
      const loop = path.slice(path.indexOf(name));
      // One spelling per cycle, whichever package it was entered from: start at the smallest name.
      const start = loop.indexOf([...loop].sort()[0] as string);
      const turned = [...loop.slice(start), ...loop.slice(0, start)];
      found.add([...turned, turned[0]].join(' -> '));
      return;
    }
    state.set(name, 'open');
    path.push(name);
    for (const dep of graph.get(name) ?? []) visit(dep);
    path.pop();
    state.set(name, 'done');
  };
  for (const name of [...graph.keys()].sort()) visit(name);
  return [...found].sort();
}

describe('workspace dependencies', () => {
  it('the search finds a cycle where there is one (so an empty answer means something)', () => {
    const graph = dependencyGraph([
      { name: '@ids/a', peerDependencies: { '@ids/b': 'workspace:^' } },
      { name: '@ids/b', devDependencies: { '@ids/c': 'workspace:^' } },
      { name: '@ids/c', dependencies: { '@ids/a': 'workspace:^' } },
      { name: '@ids/d', dependencies: { '@ids/a': 'workspace:^' } },
    ]);
    expect(cycles(graph)).toEqual(['@ids/a -> @ids/b -> @ids/c -> @ids/a']);
  });

  it('no workspace package depends on itself through others', () => {
    const graph = dependencyGraph(manifests());
    expect(graph.size).toBeGreaterThan(10);
    expect(cycles(graph)).toEqual([]);
  });
});
