// The README's flag table is written from the flags' one declaration (src/config.ts), the one
// `--help` prints: a flag added, removed or reworded there and not in the README fails here.
// `IDS_WRITE_DOCS=1 pnpm --filter @ids/server exec vitest run test/readme-flags.test.ts` rewrites
// the table.
import { join } from 'node:path';
import { markdownTable, readmeSection } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { serverFlags, serverHelp } from '../src/config.js';
import { checkServerOptions, DEFAULT_DRAIN_MS } from '../src/options.js';

const README = process.env.IDS_SERVER_README ?? join(__dirname, '..', 'README.md');

/** The table as the declarations write it: flag, variable, default, meaning. */
function flagTable(): string {
  const code = (text: string) => (text === '' ? '' : `\`${text}\``);
  return markdownTable(
    ['flag', 'environment variable', 'default', 'meaning'],
    serverFlags().map((flag) => [code(flag.flag), code(flag.env), flag.default, flag.help]),
  );
}

describe('the README flag table', () => {
  it('is what the flag declarations write (IDS_WRITE_DOCS=1 rewrites it)', () => {
    const { committed, written } = readmeSection(README, 'ids-server flags', flagTable());
    expect(committed).toBe(written);
  });

  it('has a row for every flag --help prints, and --help a line for every row', () => {
    const help = serverHelp();
    const printed = [...help.matchAll(/^ {2}(-\w, )?(--[a-z-]+)/gm)].map((m) => `${m[1] ?? ''}${m[2]}`);
    expect(printed).toEqual(serverFlags().map((flag) => flag.flag));
    for (const flag of serverFlags().filter((f) => f.default !== '')) {
      expect(help.replace(/\s+/g, ' '), flag.flag).toContain(`(default ${flag.default})`);
    }
  });

  it('states the defaults the code applies', () => {
    const stated = Object.fromEntries(serverFlags().map((flag) => [flag.flag, flag.default]));
    const applied = checkServerOptions({});
    expect([stated['--host'], stated['--port'], stated['--max-count']]).toEqual([
      applied.host,
      String(applied.port),
      String(applied.maxCount),
    ]);
    expect(stated['--idempotency-lock-ttl']).toBe(String(applied.idempotencyLockTtlMs));
    expect(stated['--drain']).toBe(String(DEFAULT_DRAIN_MS)); // the command's, not the library's 0
    expect(stated['--rate-limit']).toContain(
      String(checkServerOptions({ host: '0.0.0.0', authToken: 'x'.repeat(16) }).rateLimit),
    );
  });
});
