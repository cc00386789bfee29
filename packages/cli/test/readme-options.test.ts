// The README's option table is written from each command's option declarations (`flags`), the
// ones its `--help` prints and its parser reads: an option added, removed or reworded in code and
// not in the README fails here. `IDS_WRITE_DOCS=1 pnpm --filter @ids/cli exec vitest run
// test/readme-options.test.ts` rewrites the table.
import { join } from 'node:path';
import { markdownTable, readmeSection } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import type { Command, Flag } from '../src/command.js';
import { COMMANDS } from '../src/run.js';
import { ids } from './helpers.js';

const README = process.env.IDS_CLI_README ?? join(__dirname, '..', 'README.md');
const commands: Command[] = await Promise.all(COMMANDS.map((entry) => entry.load()));
const code = (text: string | undefined) => (text === undefined ? '' : `\`${text}\``);
const names = (name: string, flag: Flag) =>
  `${flag.short ? `-${flag.short}, ` : ''}--${name}${flag.value ? ` ${flag.value}` : ''}`;

/** The table as the declarations write it: command, option, variable, default, meaning. */
function optionTable(): string {
  const rows = commands.flatMap((command) =>
    Object.entries(command.flags ?? {}).map(([name, flag]) => [
      code(`ids ${command.name}`),
      code(names(name, flag)),
      code(flag.env),
      flag.byDefault ?? '',
      flag.choices ? `${flag.help}; its values are listed below` : flag.help,
    ]),
  );
  return markdownTable(['command', 'option', 'environment variable', 'default', 'meaning'], rows);
}

describe('the README option table', () => {
  it('is what the option declarations write (IDS_WRITE_DOCS=1 rewrites it)', () => {
    const { committed, written } = readmeSection(README, 'ids options', optionTable());
    expect(committed).toBe(written);
  });

  // The help's options are the declaration's, not a second list: each line of `Options:` is one
  // declared option (and -h), in the declared order, with its words, variable and default.
  it.each(
    commands.filter((command) => command.flags !== undefined).map((command) => [command.name, command]),
  )('ids %s --help: its options are the declared ones, with their words', async (name, command) => {
    const { stdout } = await ids([name, '--help']);
    const section = /^Options:\n([\s\S]*?)\n\n/m.exec(stdout)?.[1] ?? '';
    const listed = [...section.matchAll(/^ {2}(?:-\w, | {4})(--[a-z-]+)/gm)].map((m) => m[1]);
    const declared = Object.entries(command.flags ?? {});
    expect(listed).toEqual([...declared.map(([flag]) => `--${flag}`), '--help']);
    const flat = section.replace(/\s+/g, ' ');
    for (const [flag, spec] of declared) {
      expect(flat, `--${flag}`).toContain(spec.help.replace(/\s+/g, ' '));
      if (spec.env) expect(flat, `--${flag}`).toContain(spec.env);
      if (spec.byDefault) expect(flat, `--${flag}`).toContain(spec.byDefault);
    }
  });

  // Defaults the code takes from elsewhere: the declared words must be the value applied.
  it("states the defaults the code applies: ids lock --ttl is @ids/lock's, ids generate -n 1 writes one ID", async () => {
    const { DEFAULT_TTL_MS } = await import('@ids/lock');
    const lock = commands.find((command) => command.name === 'lock');
    expect(lock?.flags?.ttl?.byDefault).toBe(String(DEFAULT_TTL_MS));
    const generate = commands.find((command) => command.name === 'generate');
    expect(generate?.flags?.count?.byDefault).toBe('1');
    const { stdout } = await ids(['generate', '--machine-id', '1']);
    expect(stdout.trim().split('\n')).toHaveLength(1);
  });
});
