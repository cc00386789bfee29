// The deployment files are only those a test can check: the systemd unit is parsed, verified by
// systemd-analyze where it is installed, and its environment starts the server.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, scratch, startBin } from './helpers.js';

const UNIT = join(__dirname, '..', 'deploy', 'ids-server.service');

/** A unit file's sections, each key with every value it was given (Environment repeats). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const section = /^\[(\w+)\]$/.exec(trimmed);
    if (section) {
      current = new Map();
      sections.set(section[1] as string, current);
      continue;
    }
    const pair = /^([A-Za-z]+)=(.*)$/.exec(trimmed);
    if (!pair || !current) throw new Error(`not a unit line: ${line}`);
    current.set(pair[1] as string, [...(current.get(pair[1] as string) ?? []), pair[2] as string]);
  }
  return sections;
}

const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

describe('deploy/ids-server.service', () => {
  const unit = parseUnit(readFileSync(UNIT, 'utf8'));
  const service = unit.get('Service') as Map<string, string[]>;

  it('runs ids-server, stops it with SIGTERM, and waits longer than its drain and shutdown bound', () => {
    expect([...unit.keys()]).toEqual(['Unit', 'Service', 'Install']);
    expect(service.get('ExecStart')).toEqual(['/usr/bin/env ids-server']);
    expect(service.get('KillSignal')).toEqual(['SIGTERM']);
    const env = Object.fromEntries(
      (service.get('Environment') ?? []).map((e) => e.split(/=(.*)/s).slice(0, 2)),
    );
    expect(Number(service.get('TimeoutStopSec')?.[0]) * 1000).toBeGreaterThan(
      Number(env.IDS_DRAIN_MS) + Number(env.IDS_SHUTDOWN_TIMEOUT_MS),
    );
    expect(env.HOST).toBe('127.0.0.1');
  });

  it.skipIf(!hasAnalyze)('passes systemd-analyze verify (and a broken copy does not)', () => {
    const ok = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stderr).toBe('');
    const broken = join(scratch(), 'broken.service');
    writeFileSync(
      broken,
      readFileSync(UNIT, 'utf8').replace('/usr/bin/env ids-server', '/nonexistent/ids-server'),
    );
    expect(spawnSync('systemd-analyze', ['verify', broken], { encoding: 'utf8' }).status).not.toBe(0);
  });

  it('its environment starts the server: ready with two host claims in the state directory, stops with exit 0', async () => {
    const state = scratch();
    const env = Object.fromEntries(
      (service.get('Environment') ?? []).map((entry) => {
        const [key, value] = entry.split(/=(.*)/s) as [string, string];
        // %S is systemd's state directory; PORT is the one value replaced (by a free port).
        return [key, key === 'PORT' ? '0' : value.replaceAll('%S', state)];
      }),
    );
    const run = await startBin(env);
    try {
      const ready = await call(run.url, 'GET', '/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.json.machines).toEqual([
        { slot: 0, machineId: 0, state: 'held' },
        { slot: 1, machineId: 1, state: 'held' },
      ]);
      expect(run.out()).toContain(join(state, 'ids-server', 'claims'));
      expect((await call(run.url, 'GET', '/layout')).json.service.machines).toBe(2);
    } finally {
      const t0 = performance.now();
      expect(await run.stop('SIGTERM')).toBe(0);
      expect(performance.now() - t0).toBeLessThan(Number(service.get('TimeoutStopSec')?.[0]) * 1000);
    }
  });
});
