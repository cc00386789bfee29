// Every help screen, read as a user reads it: the columns line up, and everything it offers (each
// command, each flag) is in the README. The commands come from the help itself, not from a list
// kept here, so a new command or flag without docs fails.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverHelp } from '@ids/server';
import { describe, expect, it } from 'vitest';
import { ids } from './helpers.js';

const readme = (pkg: string) => readFileSync(join(__dirname, '..', '..', pkg, 'README.md'), 'utf8');
const CLI_README = readme('cli');
const SERVER_README = readme('server');

/** The names listed under a "Commands:" heading of a help text. */
function commandsOf(help: string): string[] {
  const section = /^Commands:\n((?: {2}.*\n)+)/m.exec(help)?.[1] ?? '';
  return section.split('\n').flatMap((line) => /^ {2}([a-z][a-z0-9-]*)(?: {2,}|$)/.exec(line)?.[1] ?? []);
}

/** Every help screen of `ids`: the top one, then each listed command's, and its commands' in turn. */
async function helpScreens(): Promise<Map<string, string>> {
  const screens = new Map<string, string>();
  const visit = async (path: string[]) => {
    const result = await ids([...path, '--help']);
    expect(result.code, `ids ${path.join(' ')} --help`).toBe(0);
    screens.set(['ids', ...path].join(' '), result.stdout);
    for (const name of commandsOf(result.stdout)) await visit([...path, name]);
  };
  await visit([]);
  return screens;
}

/** The flags (--name, -x) a help text offers: those that begin an indented line. */
function flagsOf(help: string): string[] {
  const flags = new Set<string>();
  for (const line of help.split('\n')) {
    const match = /^ {2,}(?:(-[a-zA-Z]), )?(--[a-z][a-z0-9-]*)/.exec(line);
    if (match?.[1]) flags.add(match[1]);
    if (match?.[2]) flags.add(match[2]);
  }
  return [...flags];
}

const mentions = (text: string, word: string) =>
  new RegExp(`(?<![\\w-])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(text);

/**
 * The lines of a help text whose columns do not line up. Within a paragraph, the rows of a list
 * at one indent ("  -n, --count N   how many") must start their last column at one place, and every
 * other column of theirs where the fullest row has one; a continuation line (one cell, indented
 * further) must start where the description column of a list above it does.
 */
function misaligned(help: string): string[] {
  const wrong: string[] = [];
  for (const paragraph of help.split(/\n\s*\n/)) {
    const lists = new Map<number, { line: string; starts: number[] }[]>(); // by indent
    for (const line of paragraph.split('\n')) {
      const starts = [...line.matchAll(/(?:^ *| {2,})(?=\S)/g)].map((m) => m.index + m[0].length);
      const indent = starts[0] ?? 0;
      if (indent === 0) continue;
      if (starts.length > 1) {
        lists.set(indent, [...(lists.get(indent) ?? []), { line, starts }]);
      } else {
        const descriptions = [...lists.entries()]
          .filter(([at]) => at < indent)
          .map(([, rows]) => rows[0]!.starts.at(-1));
        if (!lists.has(indent) && !descriptions.includes(indent)) wrong.push(line);
      }
    }
    for (const rows of lists.values()) {
      const last = rows[0]!.starts.at(-1);
      const fullest = rows.reduce((a, b) => (b.starts.length > a.starts.length ? b : a)).starts;
      for (const { line, starts } of rows) {
        if (starts.at(-1) !== last || starts.some((at) => !fullest.includes(at))) wrong.push(line);
      }
    }
  }
  return wrong;
}

describe('help screens', async () => {
  const screens = await helpScreens();
  const { stdout: serverHelpText } = { stdout: serverHelp() };
  const all = [...screens, ['ids-server', serverHelpText] as const];

  it('finds every command of ids --help, and the help of each', () => {
    expect([...screens.keys()]).toEqual(
      expect.arrayContaining(['ids', 'ids generate', 'ids decompose', 'ids compare', 'ids serve']),
    );
  });

  it.each(all)('%s --help: the columns line up', (_, help) => {
    expect(misaligned(help)).toEqual([]);
  });

  it.each([...screens].filter(([name]) => name !== 'ids'))('%s is in the CLI README', (name) => {
    expect(mentions(CLI_README, name), name).toBe(true);
  });

  // ids serve is ids-server: its flags are documented once, in @ids/server's README, which the
  // CLI README points to.
  it.each(all)('%s --help: every flag is in the README', (name, help) => {
    const text = name === 'ids serve' || name === 'ids-server' ? SERVER_README : CLI_README;
    expect(flagsOf(help).filter((flag) => !mentions(text, flag))).toEqual([]);
  });
});

describe('the alignment check', () => {
  it('finds a column that does not line up, and a stray continuation line', () => {
    const help = 'Options:\n  -a, --all     every one\n  --long-name  the other\n               more\n';
    expect(misaligned(help)).toEqual(['  --long-name  the other', '               more']);
    expect(misaligned('Options:\n  -a, --all     every one\n  --long-name   the other\n')).toEqual([]);
  });
});
