// The fenced blocks of every README (the root's, and those of packages/* and examples/*), read
// once for the two tests that run them: readme-examples.test.ts (code) and readme-shell.test.ts
// (commands).
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { root, workspacePackages } from './workspace.js';

export interface Block {
  /** The README's path from the repository root. */
  readonly readme: string;
  /** Line number of the opening fence. */
  readonly line: number;
  /** The info string's first word, lower case ("sh", "ts", ...). */
  readonly lang: string;
  /** The info string's other words ("no-run", "repo", ...). */
  readonly words: readonly string[];
  readonly code: string;
}

/** The fenced code blocks of a Markdown file, with their info strings and first line numbers. */
export function fencedBlocks(readme: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open as unknown as [string, string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[j]!)) {
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!);
      j++;
    }
    blocks.push({
      readme,
      line: i + 1,
      lang: lang.toLowerCase(),
      words: rest.trim().split(/\s+/).filter(Boolean),
      code: `${body.join('\n')}\n`,
    });
    i = j;
  }
  return blocks;
}

/** Absolute paths of the READMEs whose blocks the tests run. */
export const readmes: readonly string[] = [
  join(root, 'README.md'),
  ...[...workspacePackages('packages'), ...workspacePackages('examples')].map((pkg) =>
    join(pkg.dir, 'README.md'),
  ),
].filter((file) => existsSync(file));

/** Every block of every README, in README order, then in order within each. */
export const readmeBlocks: readonly Block[] = readmes.flatMap((file) =>
  fencedBlocks(relative(root, file), readFileSync(file, 'utf8')),
);
