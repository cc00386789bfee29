// The built page: one self-contained file, small, and what the published package hands out.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { type BuiltPage, buildPage } from '../src/build/page.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
let page: BuiltPage;

beforeAll(async () => {
  page = await buildPage(packageDir);
});

describe('the built page', () => {
  it('has its script under 30 KB gzipped', () => {
    const gzipped = gzipSync(page.script, { level: 9 }).length;
    console.log(
      `script ${page.script.length} bytes, ${gzipped} gzipped; CSS ${page.css.length}; page ${page.html.length}`,
    );
    expect(gzipped).toBeGreaterThan(1000);
    expect(gzipped).toBeLessThan(30 * 1024);
  });

  it('is one file: the script and CSS inline, no URL to fetch anything from', () => {
    expect(page.html).toContain(`<script type="module">${page.script}</script>`);
    expect(page.html).toContain(`<style>${page.css}</style>`);
    expect(page.html).not.toMatch(/\b(src|href)="(?!data:)/);
    expect(page.html).not.toMatch(/@import|url\((?!data:)/);
    expect(page.html).not.toMatch(/https?:\/\//);
  });

  it('carries none of the engine that only Node has, nor what breaks an ordinary page', () => {
    // SharedArrayBuffer is undefined unless a page is cross-origin isolated (see build/page.ts).
    for (const word of ['SharedArrayBuffer', 'Atomics', 'setImmediate', 'process.', 'require(', 'node:']) {
      expect(page.script, word).not.toContain(word);
    }
  });

  it('is what inspectorHtml() of the built package returns', async () => {
    const dist = join(packageDir, 'dist', 'index.js');
    expect(existsSync(dist), 'npm test builds every package first').toBe(true);
    const { inspectorHtml } = (await import(pathToFileURL(dist).href)) as { inspectorHtml(): string };
    expect(inspectorHtml()).toBe(page.html);
  });
});
