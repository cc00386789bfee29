// The packages ship without source maps (tsup.config.base.ts: they were 57-60% of the installed
// bytes). That is only worth it while a stack trace still leads to the code: the build is not
// minified and keeps its names, so the frame of an error thrown inside @ids/engine names the
// function that threw, and its file and line hold that very `throw`. A fresh node runs the
// built packages as a user's program would, from ESM and from CommonJS, without any map.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));
const engineDist = join(here, '..', 'packages', 'engine', 'dist');

/** The stack of the error `new Sonyflake({ machineId: 70000 })` throws, from a fresh node. */
function stackOf(mode: 'esm' | 'cjs'): string {
  const body = [
    'try { new m.Sonyflake({ machineId: 70000 }); } catch (error) { process.stdout.write(error.stack); }',
  ];
  const script =
    mode === 'esm'
      ? [`const m = await import('@ids/sonyflake');`, ...body].join('\n')
      : [`const m = require('@ids/sonyflake');`, ...body].join('\n');
  const args = mode === 'esm' ? ['--input-type=module', '-e', script] : ['-e', script];
  const run = spawnSync(process.execPath, args, { cwd: here, encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`node ${mode} exited with ${run.status}: ${run.stderr}`);
  return run.stdout;
}

describe('stack traces without source maps', () => {
  it('the built packages carry no source map, nor a comment pointing to one', () => {
    const files = readdirSync(engineDist);
    expect(files.filter((name) => name.endsWith('.map'))).toEqual([]);
    for (const name of files.filter((n) => /\.c?js$/.test(n))) {
      expect(readFileSync(join(engineDist, name), 'utf8'), name).not.toContain('sourceMappingURL');
    }
  });

  it.each(['esm', 'cjs'] as const)(
    '%s: an error thrown inside @ids/engine names the function that threw, at the line of its throw',
    (mode) => {
      const stack = stackOf(mode);
      expect(stack).toMatch(/^InvalidMachineIdError: .*received 70000/);
      // The first frame: checkMachineId (engine's src/id.ts), in a built file of @ids/engine.
      const frame = /\n {4}at (\S+) \((?:file:\/\/)?(\/[^:]+):(\d+):(\d+)\)/.exec(stack);
      // CommonJS calls across a bundle's chunks through the chunk's exports object, which V8 names
      // as the receiver: `Object.checkMachineId`. The function's own name is the point.
      expect(frame?.[1], stack).toMatch(mode === 'cjs' ? /^(Object\.)?checkMachineId$/ : /^checkMachineId$/);
      const [, , file = '', line = '0'] = frame ?? [];
      expect(file.startsWith(engineDist), file).toBe(true);
      const source = readFileSync(file, 'utf8').split('\n');
      // The line the frame names is the throw (the build keeps one statement's lines as written).
      expect(source[Number(line) - 1]).toMatch(/throw new InvalidMachineIdError/);
      // ...inside the function the frame names.
      const start = source.slice(0, Number(line)).findLastIndex((text) => /\bfunction \w+\(/.test(text));
      expect(source[start]).toMatch(/function checkMachineId\(/);
      expect(readFileSync(join(here, '..', 'packages', 'engine', 'src', 'id.ts'), 'utf8')).toMatch(
        /export function checkMachineId\(/,
      );
    },
  );
});
