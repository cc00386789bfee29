import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeId } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/run.js';
import { COMPARE_DEFAULT } from './expected.js';
import { ERROR_LINE, headerRow, hostWith, ids, jsonOf, tempDir } from './helpers.js';

// bwmarrin/snowflake's parse vectors: IDs of its default layout, which has Twitter's bits.
const BWMARRIN_BASE32_TEXT = 'b8wjm1zroyyyy';
const BWMARRIN_BASE32_ID = '1427970479175499776';
const BWMARRIN_BASE58_TEXT = '4jgmnx8Js8A';
const BWMARRIN_BASE58_ID = '1428076403798048768';

function lines(text: string): string[] {
  return text.split('\n').filter(Boolean);
}

describe('generate: what it says besides the IDs', () => {
  it('takes a count as a power of ten (1e3), and --json writes one object with the IDs as strings', async () => {
    const result = await ids(['generate', '-n', '1e3', '-m', '7', '--json']);
    expect([result.code, result.stderr]).toEqual([0, '']);
    const parsed = JSON.parse(result.stdout);
    expect(parsed.layout).toBe('sonyflake');
    expect(parsed.machineId).toBe(7);
    expect(parsed.ids).toHaveLength(1000);
    expect(new Set(parsed.ids).size).toBe(1000);
    for (const id of parsed.ids) expect(id).toMatch(/^[0-9]+$/);
  });

  it('a host-claim machine ID is noted on stderr with how to make it unique across hosts', async () => {
    const result = await ids(['generate', '-n', '2'], {
      env: { IDS_CLAIM_DIR: tempDir('note') },
    });
    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toHaveLength(2);
    expect(result.stderr).toBe(
      'ids generate: note: machine ID 0 is a host claim: unique on this host only. For IDs unique across hosts, give each host its own with --machine-id N or IDS_MACHINE_ID=N, or claim one in Redis (IDS_REDIS_URL) or ZooKeeper (IDS_ZOOKEEPER_CONNECT)\n',
    );
    // An ID given by the user, or Go's private-IPv4 rule, gets no note.
    expect((await ids(['generate', '-n', '2', '-m', '3'])).stderr).toBe('');
  });

  it('says up front how long a large count takes at the layout ceiling', async () => {
    const result = await ids(['generate', '-n', '60000', '-m', '3', '--no-progress']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      "ids generate: note: 60,000 IDs take at least 2s at the sonyflake layout's ceiling of 25,600 IDs/s per machine ID\n",
    );
    expect((await ids(['generate', '-n', '60000', '-m', '3', '-l', 'twitter'])).stderr).toBe('');
  });
});

// The example ID of Discord's API reference: 2016-04-30T11:18:25.796Z as Discord reads it, and a
// believable Sonyflake ID of 2017 too.
const DISCORD_ID = '175928847299117063';
const NOW = Date.UTC(2026, 10, 26, 12);

describe('decompose: text is an ID only when its encoding is given or unmistakable', () => {
  it('"hello world" is no ID without --format: the refusal lists the base36 reading and how to ask for it', async () => {
    const result = await ids(['decompose', 'hello', 'world'], { now: NOW });
    expect([result.code, result.stdout]).toEqual([2, '']);
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toBe(
      'ids decompose: error ERR_IDS_AMBIGUOUS_ID: "hello" is not read as an ID without --format (only digits, 16 hex digits and 13 Crockford characters are): ' +
        'it would read as base36 29234652, plausible in no named layout; pass --format base36 to read it\n',
    );
  });

  it('--format base36 reads exactly base36, and a chosen encoding gets no note', async () => {
    const result = await ids(
      ['decompose', '--json', '--format', 'base36', '-l', 'twitter', 'hello', 'world'],
      {
        now: NOW,
      },
    );
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(
      JSON.parse(result.stdout).map((r: { encoding: string; id: string }) => [r.encoding, r.id]),
    ).toEqual([
      ['base36', '29234652'],
      ['base36', '54903217'],
    ]);
    // Digits given as base36 are base36, not decimal.
    const digits = await ids(['decompose', '--json', '-f', 'base36', '-l', 'twitter', '1234'], { now: NOW });
    expect(JSON.parse(digits.stdout)[0]).toMatchObject({ encoding: 'base36', id: '49360' });
  });

  it('16 hex digits are read without --format, and the row says why', async () => {
    const result = await ids(['decompose', '-l', 'discord', '0271065ac1020007'], { now: NOW });
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toContain(`id        ${DISCORD_ID}\n`);
    expect(result.stdout).toContain(
      'read as   hex "0271065ac1020007" (no encoding but hex reads 16 characters like these)\n',
    );
  });

  it('text several encodings read is refused with each reading', async () => {
    const ambiguous = await ids(['decompose', 'zzzz'], { now: NOW });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(
      /it would read as bwmarrin32 777975, plausible in no named layout; as bwmarrin58 6551655, .*; as base36 1679615, .*; pass --format bwmarrin32 or --format bwmarrin58 or --format base36 to read it\n$/,
    );
  });
});

describe('decompose: without --layout, the other plausible layouts are named', () => {
  it('a Discord ID is read as sonyflake, the default, and discord and twitter are named beside it', async () => {
    const result = await ids(['decompose', DISCORD_ID], { now: NOW });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/layout {4}sonyflake: /);
    expect(result.stdout).toContain('time      2017-12-27T16:16:04.490Z');
    expect(result.stderr).toBe(
      `ids decompose: note: ${DISCORD_ID} read as sonyflake, the default layout (2017-12-27T16:16:04.490Z); ` +
        'also plausible as twitter (2012-03-03T13:01:20.453Z), discord (2016-04-30T11:18:25.796Z); ' +
        'an ID does not say which layout made it: pass --layout to choose\n',
    );
    // Chosen, the layout is the one read, and nothing is said.
    const chosen = await ids(['decompose', '--layout', 'discord', DISCORD_ID], { now: NOW });
    expect(chosen.stderr).toBe('');
    expect(chosen.stdout).toContain('time      2016-04-30T11:18:25.796Z');
  });

  it('a Twitter ID read in the default layout is warned about, naming the layouts to try', async () => {
    const result = await ids(['decompose', BWMARRIN_BASE32_ID], { now: NOW });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      `ids decompose: warning: ${BWMARRIN_BASE32_ID} read as sonyflake is implausible: its time, 2041-08-21T02:52:11.610Z, is in the future; try --layout twitter or --layout discord\n`,
    );
    expect((await ids(['decompose', '--layout', 'twitter', BWMARRIN_BASE32_ID], { now: NOW })).stderr).toBe(
      '',
    );
  });

  it('judges by the clock it is given: a minute of slack, not a millisecond more', async () => {
    const sonyflakeTime = Date.UTC(2017, 11, 27, 16, 16, 4, 490);
    const inTime = await ids(['decompose', DISCORD_ID], { now: sonyflakeTime - 60_000 });
    expect(inTime.stderr).toMatch(/^ids decompose: note: /);
    const early = await ids(['decompose', DISCORD_ID], { now: sonyflakeTime - 60_001 });
    expect(early.stderr).toBe(
      `ids decompose: warning: ${DISCORD_ID} read as sonyflake is implausible: its time, 2017-12-27T16:16:04.490Z, is in the future; try --layout twitter or --layout discord\n`,
    );
  });

  it('notes at most 5 IDs of a run, so a piped file does not get a line per ID', async () => {
    const input = Array.from({ length: 8 }, (_, i) => String(BigInt(DISCORD_ID) + BigInt(i))).join('\n');
    const result = await ids(['decompose', '--json'], { stdin: input, now: NOW });
    expect(jsonOf(result)).toHaveLength(8);
    const notes = lines(result.stderr);
    expect(notes).toHaveLength(5);
    expect(notes[4]).toMatch(/pass --layout to choose \(further IDs of this run are not noted\)$/);
  });
});

describe('help and usage', () => {
  it.each(COMMANDS.map((c) => c.name))('%s --help prints its usage and exits 0', async (name) => {
    for (const flag of ['--help', '-h']) {
      const result = await ids([name, flag]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^Usage: ids ${name} `));
      expect(result.stdout).toMatch(/Exit codes: 0 done, 1 failed while running, 2 a mistake/);
      expect(result.stderr).toBe('');
    }
    expect((await ids(['help', name])).stdout).toMatch(new RegExp(`^Usage: ids ${name} `));
    // After other options too, and before anything is run or validated.
    const late = await ids([name, '--layout', 'nonsense', '--help']);
    expect([late.code, late.stderr]).toEqual([0, '']);
    expect(late.stdout).toMatch(new RegExp(`^Usage: ids ${name} `));
  });

  it('ids --help lists every command; --version prints the version', async () => {
    const help = await ids(['--help']);
    expect(help.code).toBe(0);
    for (const c of COMMANDS) expect(help.stdout).toContain(`  ${c.name}`);
    expect((await ids(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('ids alone prints the help on stderr and exits 2 (like git); -v prints the version', async () => {
    const alone = await ids([]);
    expect([alone.code, alone.stdout]).toEqual([2, '']);
    expect(alone.stderr).toBe((await ids(['--help'])).stdout);
    expect((await ids(['-v'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it.each([
    [['gen'], 'ids: error ERR_IDS_USAGE: unknown command "gen"; did you mean generate?'],
    [['decompse'], 'unknown command "decompse"; did you mean decompose?'],
    [['machineid'], 'did you mean machine-id?'],
    [['--verison'], 'ids: error ERR_IDS_USAGE: unknown option "--verison"; did you mean --version?'],
    [
      ['generate', '--cont', '3'],
      'ids generate: error ERR_IDS_USAGE: unknown option "--cont"; did you mean --count? expected one of --count, --layout,',
    ],
    [['generate', '--schem', 'ulid'], 'unknown option "--schem"; did you mean --scheme?'],
    [['compare', '--scheme'], 'unknown option "--scheme"; did you mean --schemes?'],
    [['machine-id', '--explian'], 'unknown option "--explian"; did you mean --explain?'],
    [['decompose', '--jsno', '1'], 'unknown option "--jsno"; did you mean --json?'],
  ])('%j suggests the nearest name, exit 2', async (args, text) => {
    const result = await ids(args);
    expect([result.code, result.stdout]).toEqual([2, '']);
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toContain(text);
  });

  it.each([[['frobnicate']], [['generate', '--frobnicate']], [['--zzz']]])(
    '%j: nothing near, no suggestion, exit 2',
    async (args) => {
      const result = await ids(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(ERROR_LINE);
      expect(result.stderr).not.toContain('did you mean');
    },
  );

  it.each([
    [
      ['frob'],
      /^ids: error ERR_IDS_USAGE: unknown command "frob"; expected one of generate, decompose, compare, machine-id, inspect, serve/,
    ],
    [['help', 'frob'], /no command "frob"/],
    [
      ['generate', '--frob'],
      /^ids generate: error ERR_IDS_USAGE: unknown option "--frob"; expected one of --count, .*, --help \(see ids generate --help\)\n$/,
    ],
    [
      ['generate', 'extra'],
      /^ids generate: error ERR_IDS_USAGE: expected options only, received the argument "extra"/,
    ],
    [['generate', '-n'], /^ids generate: error ERR_IDS_USAGE: --count: expected a value, received nothing/],
    [
      ['generate', '--json=yes'],
      /^ids generate: error ERR_IDS_USAGE: --json: expected no value \(it is a switch\), received one/,
    ],
    [
      ['generate', '--layout', '--json'],
      /--layout: expected a value, received the option that follows it \(write --layout=VALUE/,
    ],
    // A negative number reaches the option's own check, not parseArgs' "argument is ambiguous".
    [
      ['generate', '-n', '-1'],
      /^ids generate: error ERR_IDS_USAGE: --count: expected a whole number from 1 to 1,000,000,000, received "-1"/,
    ],
    [
      ['generate', '--count', '-5'],
      /--count: expected a whole number from 1 to 1,000,000,000, received "-5"/,
    ],
    [
      ['generate', '--machine-id', '-1'],
      /^ids generate: error ERR_IDS_MACHINE_ID: --machine-id: expected an integer from 0 to 65535, received "-1"/,
    ],
    [['generate', '-n', '0'], /--count: expected a whole number from 1 to 1,000,000,000, received "0"/],
    [['generate', '-n', '1.5e3'], /received "1.5e3"/],
    [['generate', '-n', '2e9'], /from 1 to 1,000,000,000, received "2e9"/],
    [['generate', '-m', '1', '--format', 'base64'], /--format: expected one of decimal, decimal-fixed, hex/],
    [
      ['generate', '-m', '1', '--layout', 'instagram'],
      /--layout: expected one of sonyflake, sonyflake-v2, twitter/,
    ],
    [['generate', '-m', '1', '--layout', 'snowflake:node=x'], /node: expected a whole number, received "x"/],
    [['generate', '-m', '1', '--layout', 'snowflake:seq=3'], /keys node, step, epoch, received "seq=3"/],
    [['generate', '-m', '1', '--layout', 'sonyflake:epoch=soon'], /epoch: expected YYYY-MM-DD/],
    [
      ['generate', '-m', '1', '--layout', 'sonyflake:epoch=2024-01-01T00:00'],
      /needs its zone \(Z or \+hh:mm\)/,
    ],
    [
      ['compare', '--layout', 'snowflake:node=12,step=12'],
      /error ERR_IDS_INVALID_LAYOUT: .*<= 22, received 12 \+ 12 = 24/,
    ],
    [['compare', '--layout', 'sonyflake:seq=20,machine=20'], /error ERR_IDS_BITS_TIME: .*leaves 23/],
    [['compare', '--layout', 'sonyflake:epoch=2999-01-01'], /error ERR_IDS_START_TIME_AHEAD/],
    [
      ['generate', '-l', 'twitter', '-m', '1024'],
      /error ERR_IDS_MACHINE_ID: --machine-id: expected an integer from 0 to 1023/,
    ],
    [
      ['machine-id', '-m', '-1'],
      /^ids machine-id: error ERR_IDS_MACHINE_ID: --machine-id: expected an integer from 0 to 65535, received "-1"/,
    ],
    [['decompose'], /expected at least one ID/],
    [
      ['decompose', 'abc'],
      /error ERR_IDS_AMBIGUOUS_ID: "abc" is not read as an ID without --format .* as bwmarrin32 /,
    ],
    [['decompose', 'not-an-id'], /error ERR_IDS_INVALID_ID: .*which none of them reads/],
    [
      ['decompose', '--format', 'hex', '123'],
      /error ERR_IDS_INVALID_ID: expected a hex ID of exactly 16 characters/,
    ],
    [
      ['decompose', '-l', 'snowflake:node=0,step=0', '9223372036854775807'],
      /ERR_IDS_INVALID_ID: .*at most 4503599627370495 \(52 bits\)/,
    ],
    [
      // Go-valid bit lengths (seq=4,machine=4) are accepted now; a unit so long that no tick ends
      // within the Date range is the layout this command still refuses.
      ['compare', '-l', 'sonyflake:unit=9000000000000000'],
      /ERR_IDS_INVALID_LAYOUT: a 1-bit time field .* ends past the last instant a JS Date can hold/,
    ],
  ])('%j is a usage error: exit 2, one stderr line with the code', async (args, message) => {
    const result = await ids(args as string[]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('a bad IDS_MACHINE_ID is a usage error too', async () => {
    const result = await ids(['generate'], { env: { IDS_MACHINE_ID: 'seven' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/IDS_MACHINE_ID: expected an integer from 0 to 65535, received "seven"/);
  });

  it('with no explicit ID and no private IPv4, generate takes a host claim and releases it', async () => {
    const result = await ids(['generate', '-n', '3']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(3);
    // The claim was released when the generator closed: the next run gets the same lowest ID.
    const again = await ids(['machine-id', '--json']);
    const twice = await ids(['machine-id', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ step: 'host-claim' });
    expect(JSON.parse(twice.stdout).machineId).toBe(JSON.parse(again.stdout).machineId);
  });

  it('no machine ID at all is a runtime failure (exit 1) that says how to give one', async () => {
    // A claim directory that cannot be created: a path below a regular file.
    const blocked = join(tempDir('blocked'), 'file');
    writeFileSync(blocked, 'not a directory');
    const result = await ids(['generate'], { env: { IDS_CLAIM_DIR: join(blocked, 'claims') } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toMatch(
      /^ids generate: error ERR_IDS_AUTO_MACHINE_ID: no machine ID: the claim directory .* 1\. --machine-id: skipped - not given 2\. explicit ID: skipped - no machineId option, and IDS_MACHINE_ID is not set .*5\. private IPv4: failed - no private ip address: .*found 192\.0\.2\.10.* 7\. host claim: failed - .*Give one with --machine-id N or IDS_MACHINE_ID=N \(0 to 65535 for this layout\), or a writable claim directory with IDS_CLAIM_DIR\n$/,
    );
  });

  it('IDS_DEBUG=1 adds the stack, and only then', async () => {
    const plain = await ids(['generate', '-n', 'x']);
    expect(plain.stderr).not.toMatch(/\n\s+at /);
    const debug = await ids(['generate', '-n', 'x'], { env: { IDS_DEBUG: '1' } });
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});

describe('ids generate', () => {
  it('writes N increasing decimal IDs of the machine ID given', async () => {
    const result = await ids(['generate', '-n', '300', '--machine-id', '321']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const out = lines(result.stdout).map(BigInt);
    expect(out).toHaveLength(300);
    for (let i = 1; i < out.length; i++) expect(out[i]! > out[i - 1]!).toBe(true);
    // Sonyflake: the low 16 bits are the machine ID.
    expect(out.every((id) => (id & 0xffffn) === 321n)).toBe(true);
  });

  it('writes each format, and the IDs read back', async () => {
    for (const [format, pattern] of [
      ['hex', /^[0-9a-f]{16}$/],
      ['crockford32', /^[0-9A-Z]{13}$/],
      ['decimal-fixed', /^[0-9]{19}$/],
      ['bwmarrin58', /^[1-9a-zA-Z]{1,11}$/],
    ] as const) {
      const result = await ids(['generate', '-n', '5', '-l', 'twitter', '-m', '7', '-f', format]);
      expect(result.code).toBe(0);
      const out = lines(result.stdout);
      expect(out).toHaveLength(5);
      for (const text of out) {
        expect(text).toMatch(pattern);
        expect((decodeId(text, format) >> 12n) & 1023n).toBe(7n);
      }
    }
  });

  it('takes the machine ID from IDS_MACHINE_ID, then from the private IPv4 address', async () => {
    const fromEnv = await ids(['generate', '-l', 'discord'], { env: { IDS_MACHINE_ID: '1023' } });
    expect((BigInt(fromEnv.stdout.trim()) >> 12n) & 1023n).toBe(1023n);
    const fromIp = await ids(['generate'], { interfaces: hostWith('10.0.1.6') });
    expect(BigInt(fromIp.stdout.trim()) & 0xffffn).toBe(262n);
  });

  it('custom layouts from specs', async () => {
    const result = await ids(['generate', '-n', '3', '-l', 'snowflake:node=4,step=18', '-m', '15']);
    expect(result.code).toBe(0);
    for (const id of lines(result.stdout).map(BigInt)) expect((id >> 18n) & 15n).toBe(15n);
  });

  it('draws a progress bar on a terminal stderr for a large N, and erases it', async () => {
    const result = await ids(['generate', '-n', '60000', '-l', 'twitter', '-m', '1'], { stderrIsTTY: true });
    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toHaveLength(60_000);
    expect(result.stderr).toMatch(/^\r\[[#.]{30}\]\s+\d+% [\d,]+ \/ 60,000 IDs/);
    expect(result.stderr).toContain('100% 60,000 / 60,000 IDs');
    expect(result.stderr.endsWith('\r\x1b[K')).toBe(true);
  });

  it('no bar when stderr is not a terminal, for a small N, or with --no-progress', async () => {
    const piped = await ids(['generate', '-n', '60000', '-l', 'twitter', '-m', '1']);
    expect(piped.stderr).toBe('');
    const small = await ids(['generate', '-n', '100', '-l', 'twitter', '-m', '1'], { stderrIsTTY: true });
    expect(small.stderr).toBe('');
    const off = await ids(['generate', '-n', '60000', '-l', 'twitter', '-m', '1', '--no-progress'], {
      stderrIsTTY: true,
    });
    expect(off.stderr).toBe('');
  });
});

describe('ids decompose', () => {
  it('reads the bwmarrin vectors in the twitter layout, in the encodings given', async () => {
    const base32 = await ids(['decompose', '-l', 'twitter', '-f', 'bwmarrin32', BWMARRIN_BASE32_TEXT]);
    const base58 = await ids(['decompose', '-l', 'twitter', '-f', 'bwmarrin58', BWMARRIN_BASE58_TEXT]);
    expect([base32.code, base32.stderr, base58.code, base58.stderr]).toEqual([0, '', 0, '']);
    const blocks = [base32.stdout, base58.stdout];
    expect(blocks[0]).toContain(`id        ${BWMARRIN_BASE32_ID}\n`);
    expect(blocks[0]).toContain(`read as   bwmarrin32 "${BWMARRIN_BASE32_TEXT}"\n`);
    expect(blocks[0]).toContain(
      'layout    twitter: 41-bit time in 1 ms units, machine 10 (datacenter 5 + worker 5), sequence 12; epoch 2010-11-04T01:42:54.657Z\n',
    );
    expect(blocks[0]).toMatch(/time {6}2021-08-18T12:27:47\.301Z \(tick 340454692644\)\n/);
    expect(blocks[1]).toContain(`id        ${BWMARRIN_BASE58_ID}\n`);
    expect(blocks[1]).toContain('read as   bwmarrin58');
  });

  it('--json gives every field, the ID as a decimal string, parts for split layouts', async () => {
    const result = await ids(['decompose', '-l', 'twitter', '--json', BWMARRIN_BASE32_ID]);
    const [row] = jsonOf(result);
    const id = BigInt(BWMARRIN_BASE32_ID);
    expect(row).toEqual({
      input: BWMARRIN_BASE32_ID,
      encoding: 'decimal',
      id: BWMARRIN_BASE32_ID,
      layout: 'twitter',
      time: '2021-08-18T12:27:47.301Z',
      tick: Number(id >> 22n),
      sequence: Number(id & 4095n),
      machine: Number((id >> 12n) & 1023n),
      parts: { datacenter: Number((id >> 17n) & 31n), worker: Number((id >> 12n) & 31n) },
    });
  });

  it('--format forces an encoding that recognition would find ambiguous', async () => {
    const result = await ids(['decompose', '--json', '--format', 'base36', 'abc']);
    expect(jsonOf(result)[0]).toMatchObject({
      encoding: 'base36',
      id: String(Number.parseInt('abc', 36)),
    });
  });

  it('--format base36 reads upper and mixed case as Go does', async () => {
    const cases: [text: string, id: string][] = [
      ['2y8', '3824'],
      ['2Y8', '3824'],
      ['AUKDADXVWDMO', BWMARRIN_BASE32_ID],
      ['aUkDaDxVwDmO', BWMARRIN_BASE32_ID],
    ];
    const result = await ids(['decompose', '--json', '--format', 'base36', ...cases.map(([text]) => text)]);
    expect(jsonOf(result).map((row: { id: string }) => row.id)).toEqual(cases.map(([, id]) => id));
  });

  it('reads IDs from stdin when none are given', async () => {
    const generated = await ids(['generate', '-n', '3', '-m', '9']);
    const result = await ids(['decompose', '--json'], { stdin: generated.stdout });
    const rows = jsonOf(result);
    expect(rows.map((r: { id: string }) => r.id)).toEqual(lines(generated.stdout));
    expect(
      rows.every((r: { machine: number; layout: string }) => r.machine === 9 && r.layout === 'sonyflake'),
    ).toBe(true);
  });
});

describe('ids compare', () => {
  const LAYOUTS = ['sonyflake', 'sonyflake-v2', 'twitter', 'discord'];

  it('shows Sonyflake (2014) lasting 174 years to 2188-11-16T03:28:58.880Z next to the 69 years of Twitter', async () => {
    const result = await ids(['compare']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${COMPARE_DEFAULT}\n`);
    const rows = lines(result.stdout);
    expect(rows[0]).toMatch(headerRow(LAYOUTS));
    expect(rows.find((r) => r.startsWith('lifetime'))).toMatch(
      /^lifetime\s+174 years\s+174 years\s+69 years\s+69 years$/,
    );
    expect(rows.find((r) => r.startsWith('ends at'))).toMatch(/^ends at\s+2188-11-16T03:28:58\.880Z\s/);
  });

  it('adds the custom layouts given with --layout', async () => {
    const custom = ['snowflake:node=8,step=10', 'sonyflake:seq=10,machine=12,unit=20'];
    const result = await ids(['compare', ...custom.flatMap((spec) => ['-l', spec])]);
    expect(result.code).toBe(0);
    const rows = lines(result.stdout);
    expect(rows[0]).toMatch(headerRow([...LAYOUTS, ...custom]));
    // node 8 + step 10: 45 time bits of 1 ms; seq 10 + machine 12 leave Sonyflake 41 bits of 20 ms.
    expect(rows.find((r) => r.startsWith('time'))).toMatch(/45 bits of 1 ms\s+41 bits of 20 ms$/);
    expect(rows.find((r) => r.startsWith('IDs/s per machine'))).toMatch(/1,024,000\s+51,200$/);
  });

  it('takes a Go-valid layout whose time field Go would let outlast every Date (seq 4 + machine 4)', async () => {
    const result = await ids(['compare', '-l', 'sonyflake:seq=4,machine=4']);
    expect(result.code).toBe(0);
    // Go's 55 bits of 10 ms, cut to the 49 that end within the Date range; the IDs are Go's.
    expect(lines(result.stdout).find((r) => r.startsWith('time'))).toMatch(/49 bits of 10 ms$/);
  });

  it('--json has every figure, dates as ISO strings', async () => {
    const result = await ids(['compare', '--json']);
    const table = jsonOf(result);
    expect(table.map((c: { name: string }) => c.name)).toEqual(LAYOUTS);
    expect(table[0]).toMatchObject({
      timeBits: 39,
      endsAt: '2188-11-16T03:28:58.880Z',
      idsPerSecond: 25_600,
      machines: 65_536,
      unsafeNumberFrom: '2014-11-02T03:18:29.120Z',
    });
    expect(Math.floor(table[0].lifetimeYears)).toBe(174);
    expect(Math.floor(table[2].lifetimeYears)).toBe(69);
    expect(table[2].decimalLengths.at(-1)).toEqual({ digits: 19, from: '2018-05-25T13:05:53.759Z' });
  });
});

describe('ids machine-id', () => {
  it('prints the ID; --explain says which step produced it and why the earlier ones did not', async () => {
    const host = hostWith('10.0.1.6');
    expect((await ids(['machine-id'], { interfaces: host })).stdout).toBe('262\n');
    const explained = await ids(['machine-id', '--explain'], { interfaces: host });
    expect(explained.code).toBe(0);
    const lines = explained.stdout.split('\n');
    expect(lines[0]).toBe('machine ID 262 for the sonyflake layout (16 machine bits), from private IPv4');
    expect(lines[1]).toBe('    1. --machine-id: skipped - not given');
    expect(lines[2]).toBe('    2. explicit ID: skipped - no machineId option, and IDS_MACHINE_ID is not set');
    expect(lines[3]).toBe(
      '    3. Kubernetes ordinal: skipped - not in Kubernetes: KUBERNETES_SERVICE_HOST is not set',
    );
    expect(lines[4]).toBe('    4. EC2 metadata: skipped - opt-in, and IDS_AUTO_OPT_IN does not name ec2');
    expect(lines[5]).toMatch(
      /^ {4}5\. private IPv4: used - machine ID 262 from 10\.0\.1\.6 \(third octet \* 256 \+ fourth, Go's rule\) on eth0: the only private IPv4 address; held on this host: /,
    );
  });

  it('on a host without a private IPv4, --explain shows the host claim that gave the ID', async () => {
    const explained = await ids(['machine-id', '--explain']);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(
      /^machine ID \d+ for the sonyflake layout \(16 machine bits\), from host claim\n/,
    );
    expect(explained.stdout).toMatch(/5\. private IPv4: failed - no private ip address/);
    expect(explained.stdout).toMatch(
      /7\. host claim: used - machine ID \d+, unique among the processes of this host using /,
    );
  });

  it('--json lists the steps; the environment wins over the address, the flag over both', async () => {
    const host = hostWith('10.0.1.6');
    const env = await ids(['machine-id', '--json'], { interfaces: host, env: { IDS_MACHINE_ID: '77' } });
    expect(JSON.parse(env.stdout)).toEqual({
      machineId: 77,
      step: 'explicit',
      layout: 'sonyflake',
      bits: 16,
      trail: [
        { step: '--machine-id', outcome: 'skipped', detail: 'not given' },
        { step: 'explicit', outcome: 'used', detail: 'machine ID 77 from IDS_MACHINE_ID' },
      ],
    });
    const flag = await ids(['machine-id', '--json', '-m', '5'], {
      interfaces: host,
      env: { IDS_MACHINE_ID: '77' },
    });
    expect(JSON.parse(flag.stdout)).toMatchObject({ machineId: 5, step: '--machine-id' });
  });

  it('an address whose ID does not fit the layout is refused, not cut down; a host claim is used instead', async () => {
    // 10.0.5.6 gives 1286, which needs 11 bits; the twitter layout has 10.
    const result = await ids(['machine-id', '--json', '-l', 'twitter'], { interfaces: hostWith('10.0.5.6') });
    const json = jsonOf(result);
    expect(json.step).toBe('host-claim');
    expect(json.machineId).toBeLessThan(1024);
    expect(json.trail[4]).toMatchObject({
      step: 'private-ip',
      outcome: 'failed',
      detail: expect.stringMatching(
        /10\.0\.5\.6 gives machine ID 1286, which needs 11 bits; the layout's machine field has 10/,
      ),
    });
  });
});
