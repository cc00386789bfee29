// `ids compare`'s second table (every scheme) and `ids generate --scheme`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidLayoutError, NAMED_LAYOUTS } from '@ids/engine';
import { STORES, type StoreEntry } from '@ids/engine/internal';
import { hasMariadb, hasRedis, serverForSuite, startMariadb, startRedis } from '@ids/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { compareSchemes, NON_LAYOUT_SCHEMES, SCHEMES, SEGMENT_STORES, schemeTable } from '../src/schemes.js';
import { ERROR_LINE, headerRow, ids, jsonOf } from './helpers.js';

const lines = (text: string) => text.trimEnd().split('\n');

describe('ids compare: every scheme', () => {
  const SCHEMES = ['uuidv4', 'uuidv7', 'ulid', 'segment', 'sonyflake', 'snowflake'];

  it('--schemes prints the scheme table: UUIDv4, UUIDv7, ULID, segment, Sonyflake, snowflake', async () => {
    const result = await ids(['compare', '--schemes']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const rows = lines(result.stdout);
    expect(rows[0]).toMatch(headerRow(SCHEMES));
    expect(rows.find((r) => r.startsWith('bits'))).toMatch(/^bits\s+128\s+128\s+128\s+63\s+63\s+63$/);
    expect(rows.find((r) => r.startsWith('sortable by time'))).toMatch(/no\s+yes\s+yes\s+no\s+yes\s+yes$/);
    expect(rows.find((r) => r.startsWith('IDs/s per generator'))).toMatch(/25,600\s+4,096,000$/);
    expect(rows.find((r) => r.startsWith('fits BIGINT'))).toMatch(
      /^fits BIGINT\s+no\s+no\s+no\s+yes\s+yes\s+yes$/,
    );
  });

  it('--schemes --json gives the scheme rows alone as JSON', async () => {
    const result = await ids(['compare', '--schemes', '--json']);
    const table = jsonOf(result);
    expect(table.map((s: { name: string }) => s.name)).toEqual(SCHEMES);
    expect(table[4]).toMatchObject({ bits: 63, idsPerSecond: 25_600, fitsSignedInt64: true });
  });
});

describe('ids generate --scheme', () => {
  const data = mkdtempSync(join(tmpdir(), 'ids-cli-segment-'));
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('uuidv7: RFC 9562 version 7, increasing', async () => {
    const result = await ids(['generate', '--scheme', 'uuidv7', '-n', '1000']);
    expect(result.code).toBe(0);
    const out = lines(result.stdout);
    expect(out.length).toBe(1000);
    for (const id of out)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...out].sort()).toEqual(out);
  });

  it('uuidv4: version 4', async () => {
    const result = await ids(['generate', '--scheme', 'uuidv4', '-n', '3']);
    for (const id of lines(result.stdout)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab]/);
  });

  it('ulid: 26 Crockford base32 characters, increasing (monotonic)', async () => {
    const result = await ids(['generate', '--scheme', 'ulid', '-n', '1000']);
    const out = lines(result.stdout);
    expect(out.length).toBe(1000);
    for (const id of out) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(out).size).toBe(1000);
    expect([...out].sort()).toEqual(out);
  });

  it('segment: dense IDs from 1 on a PGlite store, continuing across runs (never from 1 again)', async () => {
    const store = `pglite:${join(data, 'db')}`;
    const created = await ids(['segment', 'create-tag', 'cli', '--store', store, '--after', '0']);
    expect(created.stderr).toBe('');
    const first = await ids(['generate', '--scheme', 'segment', '--store', store, '--tag', 'cli', '-n', '5']);
    expect(first.stderr).toBe('');
    expect(lines(first.stdout)).toEqual(['1', '2', '3', '4', '5']);
    const second = await ids([
      'generate',
      '--scheme',
      'segment',
      '--store',
      store,
      '--tag',
      'cli',
      '-n',
      '2',
    ]);
    expect(BigInt(lines(second.stdout)[0]!)).toBeGreaterThan(5n);
  }, 180_000);

  describe.skipIf(!hasMariadb())('on a real MySQL (MariaDB)', () => {
    const suite = serverForSuite(startMariadb);

    it('segment --store mysql://...: dense IDs from 1 in leaf_alloc, continuing across runs', async () => {
      const run = (n: string) =>
        ids(['generate', '--scheme', 'segment', '--store', suite.server.url, '--tag', 'cli', '-n', n]);
      // Not created yet: refused, never started from 1 on its own.
      expect((await run('1')).stderr).toMatch(/ERR_IDS_SEGMENT_UNKNOWN_TAG/);
      const created = await ids([
        'segment',
        'create-tag',
        'cli',
        '--store',
        suite.server.url,
        '--after',
        '0',
      ]);
      expect(created.stderr).toBe('');
      const again = await ids(['segment', 'create-tag', 'cli', '--store', suite.server.url, '--after', '0']);
      expect(again.stderr).toMatch(/ERR_IDS_SEGMENT_TAG_EXISTS/);
      const first = await run('3');
      expect(first.stderr).toBe('');
      expect(lines(first.stdout)).toEqual(['1', '2', '3']);
      expect(BigInt(lines((await run('1')).stdout)[0]!)).toBeGreaterThan(3n);
    }, 120_000);
  });

  it.each([
    [['--scheme', 'uuidv8'], /--scheme: expected one of uuidv4, uuidv7, ulid, segment, received "uuidv8"/],
    [['--scheme', 'ulid', '--format', 'hex'], /--format does not apply to --scheme ulid/],
    [['--scheme', 'uuidv7', '--tag', 'x'], /--store and --tag apply to --scheme segment only/],
    [
      ['--scheme', 'segment', '--store', 'mongodb://x'],
      /expected postgres:\/\/\.\.\., mysql:\/\/\.\.\., redis:\/\/\.\.\., pglite:/,
    ],
    [
      ['--scheme', 'segment', '--store', 'pglite:', '--tag', 'bad tag'],
      /InvalidTag|ERR_IDS_SEGMENT_INVALID_TAG/,
    ],
  ])(
    '%j: one error line',
    async (args, message) => {
      const result = await ids(['generate', ...args]);
      expect(result.code).toBeGreaterThan(0);
      expect(result.stderr).toMatch(ERROR_LINE);
      expect(result.stderr).toMatch(message);
    },
    120_000,
  );
});

// Issue 22 item 3: `--store redis://.../99` went to database 0 when the server had no database 99.
describe.skipIf(!hasRedis())('ids generate --scheme segment --store redis://...', () => {
  const redis = serverForSuite(startRedis);

  it.each([
    ['99', /ERR_IDS_REDIS_DATABASE: .*received database 99: the server has databases 0 to 15/],
    ['-1', /ERR_IDS_INVALID_ARGUMENT: url: the database of .*received "-1" \(string\)/],
  ])(
    'database %s: one error line with the typed error',
    async (db, message) => {
      const result = await ids([
        'generate',
        '--scheme',
        'segment',
        '--store',
        `${redis.server.url}/${db}`,
        '--tag',
        't',
      ]);
      expect(result.code).toBeGreaterThan(0);
      expect(result.stderr).toMatch(ERROR_LINE);
      expect(result.stderr).toMatch(message);
    },
    120_000,
  );
});

// The table's data, beside the command that prints it: one column per scheme `ids generate
// --scheme` makes, then the layouts' columns derived from their limits.
describe('the scheme table', () => {
  it('has a column for every scheme --scheme makes, then Sonyflake and snowflake derived from their layouts', () => {
    const rows = schemeTable();
    expect(rows.map((r) => r.name)).toEqual([...SCHEMES, 'sonyflake', 'snowflake']);
    const [uuidv4, uuidv7, ulid, segment, sonyflake, twitter] = rows;
    expect(uuidv4).toMatchObject({
      bits: 128,
      sortableByTime: false,
      fitsSignedInt64: false,
      reveals: 'nothing',
    });
    expect(uuidv7).toMatchObject({ bits: 128, sortableByTime: true, fitsSignedInt64: false });
    expect(ulid).toMatchObject({ bits: 128, sortableByTime: true, fitsSignedInt64: false });
    expect(segment).toMatchObject({ bits: 63, sortableByTime: false, fitsSignedInt64: true });
    expect(segment!.reveals).toMatch(/volume/);
    expect(sonyflake).toMatchObject({
      bits: 63,
      sortableByTime: true,
      idsPerSecond: 25_600,
      coordination: 'a machine ID unique among 65,536',
      lifetime: '174 years (to 2188-11-16)',
      fitsSignedInt64: true,
    });
    expect(twitter).toMatchObject({
      bits: 63,
      idsPerSecond: 4_096_000,
      lifetime: '69 years (to 2080-07-10)',
    });
    expect(Object.isFrozen(NON_LAYOUT_SCHEMES)).toBe(true);
  });

  it('names every store a segment store string can open: PostgreSQL, MySQL, Redis and PGlite', () => {
    const segment = NON_LAYOUT_SCHEMES.find((s) => s.name === 'segment')!;
    expect(segment.coordination).toBe(
      'a store (PostgreSQL, MySQL, Redis, PGlite) once per segment of `step` IDs',
    );
    // The names come from the store table: each string that opens a segment store has its store named.
    for (const where of [
      'pglite:/tmp/x',
      'postgres://127.0.0.1/ids',
      'mysql://127.0.0.1/ids',
      'redis://127.0.0.1',
    ]) {
      const store = STORES.find((entry: StoreEntry) => entry.segment && entry.scheme.test(where));
      expect(SEGMENT_STORES).toContain(store?.title);
    }
    expect(SEGMENT_STORES).toHaveLength(4);
  });

  it('validates layouts as compareLayouts does', () => {
    expect(() =>
      compareSchemes([{ timeBits: 10, timeUnitMs: 10, sequenceBits: 8, machineBits: 16 } as never]),
    ).toThrow();
    expect(() => compareSchemes([{ ...NAMED_LAYOUTS.sonyflake.layout, timeBits: 60 }])).toThrow(
      InvalidLayoutError,
    );
  });
});
