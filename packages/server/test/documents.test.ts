// What the server documents, held to the tools operators run on it: the OpenAPI document to
// Redocly's linter with its recommended rules, /metrics to `promtool check metrics`. Both run as
// the real programs on what a real `ids-server` serves; each is also shown failing on a broken copy,
// so that a tool that checks nothing cannot pass the test.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { hasRedis, serverForSuite, startRedis } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BinRun, call, createTags, scratch, startBin } from './helpers.js';

const require = createRequire(import.meta.url);
const REDOCLY = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
// Debian's `prometheus` package provides it (scripts/ensure-services.mjs installs it).
const PROMTOOL = process.env.PROMTOOL_BIN ?? 'promtool';
const TOKEN = 'documents-test-token-0123456789';

interface LintTotals {
  errors: number;
  warnings: number;
}

/** `redocly lint --extends=recommended` on a document; the problems it found, and its totals. */
function lint(doc: unknown): { totals: LintTotals; problems: string[] } {
  const file = join(scratch(), 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const result = spawnSync(
    process.execPath,
    [REDOCLY, 'lint', file, '--extends=recommended', '--format=json'],
    {
      encoding: 'utf8',
      // No usage report, no version check: the linter stays off the network.
      env: {
        ...process.env,
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        NO_COLOR: '1',
      },
    },
  );
  const start = result.stdout.indexOf('{');
  expect(start, `redocly printed no JSON: ${result.stdout}${result.stderr}`).toBeGreaterThanOrEqual(0);
  const report = JSON.parse(result.stdout.slice(start)) as {
    totals: LintTotals;
    problems: { ruleId: string; message: string }[];
  };
  return { totals: report.totals, problems: report.problems.map((p) => `${p.ruleId}: ${p.message}`) };
}

/** `promtool check metrics` on an exposition: its exit code and what it said. */
function promtool(text: string): { status: number | null; said: string } {
  const result = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (result.error) {
    throw new Error(
      `${PROMTOOL} could not be run (${result.error.message}): run node scripts/ensure-services.mjs promtool, or set PROMTOOL_BIN`,
    );
  }
  return { status: result.status, said: `${result.stdout}${result.stderr}` };
}

describe('a loopback server with two machine IDs and nothing else', () => {
  let run: BinRun;
  beforeAll(async () => {
    run = await startBin({ IDS_MACHINE_ID: '1,2' });
  });
  afterAll(async () => {
    await run?.stop();
  });

  it('its OpenAPI document passes redocly lint (recommended) without a warning; a copy without the security scheme does not', async () => {
    const doc = (await call(run.url, 'GET', '/openapi.json')).json;
    expect(lint(doc)).toEqual({ totals: expect.objectContaining({ errors: 0, warnings: 0 }), problems: [] });
    // The token a server off loopback requires is declared here too, as optional.
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{}, { bearer: [] }]);
    const { security: _s, ...bare } = doc;
    const { securitySchemes: _b, ...components } = doc.components;
    const broken = lint({
      ...bare,
      components,
      servers: undefined,
      info: { ...doc.info, license: undefined },
    });
    expect(broken.totals.errors).toBeGreaterThan(0);
    expect(broken.problems.join('\n')).toMatch(/security-defined/);
  });

  it('every labelled series exists from the start at 0, before any ID is issued', async () => {
    const text = (await call(run.url, 'GET', '/metrics')).text;
    for (const slot of ['0', '1']) {
      for (const name of [
        'ids_issued_total',
        'ids_generator_waits_total',
        'ids_clock_backwards_total',
        'ids_claim_fences_total',
        'ids_claim_renewals_total',
        'ids_generator_wait_seconds_count',
      ]) {
        expect(text).toContain(`${name}{slot="${slot}"} 0\n`);
      }
    }
  });

  it('/metrics passes promtool check metrics; a copy with a gauge named _total does not', async () => {
    await call(run.url, 'GET', '/ids?count=600');
    const text = (await call(run.url, 'GET', '/metrics')).text;
    expect(promtool(text)).toEqual({ status: 0, said: '' });
    const broken = promtool(
      `${text}# HELP ids_broken_total x\n# TYPE ids_broken_total gauge\nids_broken_total 1\n`,
    );
    expect(broken.status).not.toBe(0);
    expect(broken.said).toMatch(/ids_broken_total non-counter metrics should not have "_total" suffix/);
  });
});

describe.skipIf(!hasRedis())('a server with a token, tokens on Redis and segment IDs on PGlite', () => {
  const redis = serverForSuite(startRedis);
  let run: BinRun;
  const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
  beforeAll(async () => {
    const store = `pglite:${scratch()}`;
    await createTags(store, ['orders', 'invoices']);
    run = await startBin({
      IDS_CLAIM_DIR: scratch(),
      IDS_AUTH_TOKEN: TOKEN,
      IDS_REDIS_URL: redis.server.url,
      IDS_SEGMENT_STORE: store,
      IDS_SEGMENT_TAGS: 'orders,invoices',
    });
  }, 180_000);
  afterAll(async () => {
    await run?.stop();
  });

  it('its OpenAPI document (token and segment routes, bearer required) passes redocly lint without a warning', async () => {
    const doc = (await call(run.url, 'GET', '/openapi.json')).json;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/tokens', '/api/segment/get/{tag}']));
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(lint(doc)).toEqual({ totals: expect.objectContaining({ errors: 0, warnings: 0 }), problems: [] });
  });

  it('segment metrics per tag: from the start, then IDs served, switches, fetch latency, step and IDs held', async () => {
    const before = (await call(run.url, 'GET', '/metrics', auth)).text;
    const valueIn = (text: string, name: string, tag: string) =>
      Number(new RegExp(`^${name}\\{tag="${tag}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    for (const tag of ['orders', 'invoices']) {
      expect(before).toContain(`ids_segment_ids_served_total{tag="${tag}"} 0\n`);
      expect(before).toContain(`ids_segment_switches_total{tag="${tag}"} 0\n`);
      // A configured tag's first segment is taken at start, and the take is timed.
      expect(valueIn(before, 'ids_segment_fetch_seconds_count', tag)).toBeGreaterThanOrEqual(1);
      expect(valueIn(before, 'ids_segment_remaining', tag)).toBe(1000);
    }
    // 2501 IDs of a tag whose first segment holds 1000: that one at least was used up (the next
    // ones may be larger: the dynamic step grows while segments go fast).
    expect((await call(run.url, 'GET', '/api/segment/get/orders', auth)).status).toBe(200);
    for (let i = 0; i < 25; i++) {
      expect((await call(run.url, 'GET', '/api/segment/ids/orders?count=100', auth)).status).toBe(200);
    }
    const text = (await call(run.url, 'GET', '/metrics', auth)).text;
    const value = (name: string, tag: string) =>
      Number(new RegExp(`^${name}\\{tag="${tag}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('ids_segment_ids_served_total', 'orders')).toBe(2501);
    const switches = value('ids_segment_switches_total', 'orders');
    expect(switches).toBeGreaterThanOrEqual(1);
    // Every switch took a segment fetched before it, and the first segment was fetched too.
    expect(value('ids_segment_fetch_seconds_count', 'orders')).toBeGreaterThanOrEqual(switches + 1);
    expect(value('ids_segment_fetch_seconds_sum', 'orders')).toBeGreaterThan(0);
    expect(value('ids_segment_step', 'orders')).toBeGreaterThanOrEqual(1000);
    expect(value('ids_segment_remaining', 'orders')).toBeGreaterThan(0);
    // The untouched tag has served nothing: its first segment is still whole.
    expect(value('ids_segment_ids_served_total', 'invoices')).toBe(0);
    expect(value('ids_segment_remaining', 'invoices')).toBe(1000);
    expect(promtool(text)).toEqual({ status: 0, said: '' });
  });
});
