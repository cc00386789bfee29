// Every help screen, read as a user reads it: the columns line up, and each command it offers is
// in the README. The commands come from the help itself, not from a list kept here, so a new
// command without docs fails.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STORES } from '@ids/engine/internal';
import { FUTURE_SLACK_MS, NEAR_EPOCH_MS } from '@ids/engine/read';
import { serverHelp } from '@ids/server';
import { describe, expect, it } from 'vitest';
import { serveHelp } from '../src/commands/serve.js';
import { ids } from './helpers.js';

const readme = (pkg: string) => readFileSync(join(__dirname, '..', '..', pkg, 'README.md'), 'utf8');
const CLI_README = readme('cli');

/** The commands listed under a "Commands:" heading of a help text, each as its words ("segment create-tag"). */
function commandsOf(help: string): string[][] {
  const section = /^Commands:\n((?: {2}.*\n)+)/m.exec(help)?.[1] ?? '';
  return section
    .split('\n')
    .flatMap((line) => /^ {2}([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?: {2,}|$)/.exec(line)?.[1] ?? [])
    .map((name) => name.split(' '));
}

/** Every help screen of `ids`: the top one, then each listed command's, and its commands' in turn. */
async function helpScreens(): Promise<Map<string, string>> {
  const screens = new Map<string, string>();
  const visit = async (path: string[]) => {
    const result = await ids([...path, '--help']);
    expect(result.code, `ids ${path.join(' ')} --help`).toBe(0);
    screens.set(['ids', ...path].join(' '), result.stdout);
    for (const words of commandsOf(result.stdout)) await visit([...path, ...words]);
  };
  await visit([]);
  return screens;
}

const mentions = (text: string, word: string) =>
  new RegExp(`(?<![\\w-])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(text);

/**
 * The lines of a help text whose columns do not line up. A list is a run of rows of two or more
 * cells at one indent ("  -n, --count N   how many"), ended by a line indented less: its rows must
 * start their last cell at one column, and every other cell where its fullest row has one. A line
 * of one cell is either a name alone in a list, ending before the list's description column, or a
 * continuation starting at the description column of an open list indented less.
 */
function misaligned(help: string): string[] {
  type List = { description: number; fullest: number[]; rows: { line: string; starts: number[] }[] };
  const wrong: string[] = [];
  for (const paragraph of help.split(/\n\s*\n/)) {
    const open = new Map<number, List>(); // by indent
    const singles: { line: string; indent: number; lists: Map<number, List> }[] = [];
    const lists: List[] = [];
    for (const line of paragraph.split('\n')) {
      const starts = [...line.matchAll(/(?:^ *| {2,})(?=\S)/g)].map((m) => m.index + m[0].length);
      const indent = starts[0];
      if (indent === undefined || indent === 0) continue;
      for (const at of open.keys()) if (at > indent) open.delete(at);
      if (starts.length === 1) {
        singles.push({ line, indent, lists: new Map(open) });
        continue;
      }
      let list = open.get(indent);
      if (!list) {
        list = { description: starts.at(-1)!, fullest: starts, rows: [] };
        open.set(indent, list);
        lists.push(list);
      }
      list.rows.push({ line, starts });
      if (starts.length > list.fullest.length) list.fullest = starts;
    }
    for (const list of lists) {
      for (const { line, starts } of list.rows) {
        if (starts.at(-1) !== list.description || starts.some((at) => !list.fullest.includes(at))) {
          wrong.push(line);
        }
      }
    }
    for (const { line, indent, lists: around } of singles) {
      const own = around.get(indent);
      const alone = own !== undefined && line.trimEnd().length < own.description;
      const continuation = [...around].some(([at, list]) => at < indent && list.description === indent);
      if (!alone && !continuation) wrong.push(line);
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

  // Two help screens side by side on one terminal, or one in a split pane.
  it.each(all)('%s --help: no line is wider than 100 columns', (_, help) => {
    expect(help.split('\n').filter((line) => line.length > 100)).toEqual([]);
  });

  it.each(all)('%s --help: the exit codes, worded alike', (_, help) => {
    // A missing optional package is exit 2 from both commands, and both helps say so.
    expect(help.replace(/\s+/g, ' ')).toMatch(/Exit codes: 0 [^.]*, 2 [^.]*not installed\. $/);
  });

  it.each([...screens].filter(([name]) => name !== 'ids'))('%s is in the CLI README', (name) => {
    expect(mentions(CLI_README, name), name).toBe(true);
  });

  // Each flag's words, variable and default in the READMEs are written from the declarations the
  // help prints: test/readme-options.test.ts here, and @ids/server's test/readme-flags.test.ts
  // for ids-server and ids serve.
});

describe('ids decompose --help states the plausibility rule the engine applies', () => {
  it('a day after the epoch (NEAR_EPOCH_MS) and a minute from now (FUTURE_SLACK_MS)', async () => {
    // The text once said "between their epoch and a minute from now", while the engine refuses a
    // reading closer to the epoch than NEAR_EPOCH_MS: the help must say what the code does.
    expect(NEAR_EPOCH_MS).toBe(86_400_000);
    expect(FUTURE_SLACK_MS).toBe(60_000);
    const { stdout } = await ids(['decompose', '--help']);
    expect(stdout.replace(/\s+/g, ' ')).toContain(
      'at least a day after their epoch and at most a minute from now',
    );
  });
});

describe('the stores each help names', () => {
  // The one table of stores (engine's STORES): every command that takes a
  // segment store names each of them in its help.
  const schemes = STORES.filter((store) => 'segment' in store).map((store) => store.prefix);

  it.each([['segment'], ['generate'], ['serve']])('ids %s --help names every segment store', async (name) => {
    const { stdout } = await ids([name, '--help']);
    expect(schemes.filter((scheme) => scheme === undefined || !stdout.includes(scheme))).toEqual([]);
  });

  it('ids lock --help names every lock store of the table', async () => {
    const { stdout } = await ids(['lock', '--help']);
    const prefixes = STORES.filter((store) => 'lock' in store).map((store) => store.prefix);
    expect(prefixes).toContain('zookeeper://');
    expect(prefixes.filter((prefix) => !stdout.includes(prefix))).toEqual([]);
  });

  it('ids machine-id --help and the host-claim note name every machine-ID store of the table and its variables', async () => {
    const { stdout } = await ids(['machine-id', '--help']);
    const stores = STORES.flatMap((store) =>
      'machineId' in store ? [{ ...store.machineId, title: store.title }] : [],
    );
    expect(stores.map((store) => store.title)).toEqual(['Redis', 'etcd', 'ZooKeeper']);
    const { stderr } = await ids(['generate']);
    for (const store of stores) {
      expect(stdout).toContain(`  ${`${store.title} claim`.padEnd(20)}with ${store.env.join(' or ')} set`);
      expect(stdout).toContain(store.package);
      expect(stderr).toContain(`${store.title} (${store.env.join(' or ')})`);
    }
  });
});

describe('ids serve --help without @ids/server', () => {
  it('is the command and what to install, exit 0: help never needs the package it describes', async () => {
    const missing = Object.assign(new Error("Cannot find package '@ids/server' imported from /x.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const help = await serveHelp(() => Promise.reject(missing));
    expect(help).toMatch(/^Usage: ids serve \[options\]\n/);
    expect(help).toContain('@ids/server is not installed here: install it');
    expect(misaligned(help)).toEqual([]);
    // Any other failure to load it is not hidden behind a help text.
    await expect(serveHelp(() => Promise.reject(new Error('broken')))).rejects.toThrow('broken');
  });
});

describe('the alignment check', () => {
  it('finds a column that does not line up, a stray continuation line, a name run into its text', () => {
    const help = [
      'Options:',
      '  -a, --all     every one',
      '  --long-name  the other',
      '               more',
      '  --format      one of:',
      '    decimal       digits',
      '    decimal-fixed 19 digits',
      '',
    ].join('\n');
    expect(misaligned(help)).toEqual([
      '  --long-name  the other',
      '               more',
      '    decimal-fixed 19 digits',
    ]);
    const fixed =
      'Options:\n  -a, --all     every one\n  --long-name   the other\n                more\n  -h\n';
    expect(misaligned(fixed)).toEqual([]);
  });
});
