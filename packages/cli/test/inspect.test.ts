// `ids inspect --html`: the inspector page of @ids/inspector, as a file a user can open offline.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { inspectorHtml } from '@ids/inspector';
import { describe, expect, it } from 'vitest';
import { run } from '../src/run.js';
import { ERROR_LINE, ids } from './helpers.js';

const bin = join(__dirname, '..', 'bin', 'ids.js');

describe('ids inspect', () => {
  it('--html writes the whole page, the same bytes as inspectorHtml()', async () => {
    const result = await ids(['inspect', '--html']);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toBe(inspectorHtml());
    expect(result.stdout).toMatch(/^<!doctype html>/);
    expect(result.stdout).toContain('<script type="module">');
  });

  it('the built executable redirected to a file writes the page', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-inspect-'));
    try {
      const file = join(dir, 'layouts.html');
      const result = spawnSync('bash', ['-c', `"${process.execPath}" "${bin}" inspect --html > "${file}"`], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect([result.status, result.stderr]).toEqual([0, '']);
      expect(readFileSync(file, 'utf8')).toBe(inspectorHtml());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without --html, with an unknown option or an argument: a usage error, exit 2', async () => {
    for (const args of [['inspect'], ['inspect', '--pdf'], ['inspect', '--html', '123']]) {
      const result = await ids(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(ERROR_LINE);
    }
    expect((await ids(['inspect'])).stderr).toContain('expected --html');
  });

  it('refuses to pour the page into a terminal', async () => {
    let written = '';
    const terminal = Object.assign(
      new Writable({
        write(chunk, _encoding, callback) {
          written += String(chunk);
          callback();
        },
      }),
      { isTTY: true },
    );
    let errors = '';
    const stderr = new Writable({
      write(chunk, _encoding, callback) {
        errors += String(chunk);
        callback();
      },
    });
    const code = await run(['inspect', '--html'], { stdout: terminal, stderr, env: {} });
    expect(code).toBe(2);
    expect(written).toBe('');
    expect(errors).toMatch(/stdout is a terminal: redirect the page to a file/);
  });
});
