import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/clock.js';
import { DuplicateGeneratorError } from '../src/duplicate-guard.js';
import { InvalidArgumentError } from '../src/errors.js';
import { checkGeneratorOptions, type GeneratorOptions, IdGenerator } from '../src/generator.js';
import { defineLayout } from '../src/layout.js';
import { createSharedState, sharedStateCell } from '../src/shared.js';
import { SONYFLAKE_SPEC, TWITTER_SPEC } from './layouts.js';

// The guard against two live generators with one layout and machine ID in a realm. This
// package's vitest config turns it off for the other tests (IDS_SAME_MACHINE_ID=allow); here
// every generator asks for it, or the variable is removed to show the default.

const layout = defineLayout(SONYFLAKE_SPEC);
const T0 = Date.UTC(2026, 10, 22, 12);
const refuse = { sameMachineId: 'refuse' } as const;
const open: IdGenerator[] = [];

function make(options: Partial<GeneratorOptions> = {}): IdGenerator {
  const generator = new IdGenerator(
    checkGeneratorOptions({
      layout,
      machineId: 5,
      clock: new FakeClock(T0),
      ...refuse,
      ...options,
    }),
  );
  open.push(generator);
  return generator;
}

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(open.splice(0).map((g) => g.close()));
});

describe('a second live generator with the same layout and machine ID', () => {
  it('is refused by default, naming where the first was created and how to share it', () => {
    vi.stubEnv('IDS_SAME_MACHINE_ID', undefined);
    const first = new IdGenerator(checkGeneratorOptions({ layout, machineId: 5, clock: new FakeClock(T0) }));
    open.push(first);
    let error: unknown;
    try {
      new IdGenerator(checkGeneratorOptions({ layout, machineId: 5, clock: new FakeClock(T0) }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DuplicateGeneratorError);
    expect((error as DuplicateGeneratorError).code).toBe('ERR_IDS_DUPLICATE_GENERATOR');
    const message = (error as Error).message;
    // The first one's creation site: this test file, not a frame of the engine.
    expect(message).toMatch(/created at .*duplicate-guard\.test\.ts:\d+/);
    expect(message).toMatch(/machine ID 5/);
    expect(message).toMatch(/Create one generator and share it/);
    expect(message).toMatch(/close\(\) the first/);
    expect(message).toMatch(/sameMachineId: 'allow'/);
  });

  it('many generators: every other machine ID and every other layout is accepted, every repeat refused', () => {
    for (let id = 0; id < 200; id++) make({ machineId: id });
    const twitter = defineLayout(TWITTER_SPEC);
    for (let id = 0; id < 200; id++) make({ layout: twitter, machineId: id });
    // The same bits from another epoch, or in another time unit, are other layouts.
    make({ layout: defineLayout({ ...SONYFLAKE_SPEC, epochMs: SONYFLAKE_SPEC.epochMs + 1 }) });
    make({ layout: defineLayout({ ...SONYFLAKE_SPEC, timeUnitMs: 1 }) });
    for (let id = 0; id < 200; id++) expect(() => make({ machineId: id })).toThrow(DuplicateGeneratorError);
    for (let id = 0; id < 200; id++) {
      expect(() => make({ layout: twitter, machineId: id })).toThrow(DuplicateGeneratorError);
    }
  });

  it('is accepted once the first is closed, and close() of the refused one frees nothing', async () => {
    const first = make();
    await first.close();
    const second = make();
    expect(() => make()).toThrow(DuplicateGeneratorError);
    await second.close();
    make();
  });

  it('the two would have issued duplicates: the refusal is what stops them', () => {
    const a = make({ sameMachineId: 'allow' });
    const b = make({ sameMachineId: 'allow' });
    const ids = [...Array(100)].flatMap(() => [a.nextIdSync(), b.nextIdSync()]);
    expect(new Set(ids).size).toBe(100);
  });

  it("generators over one shared state are not refused (threads' pattern, here in one realm)", () => {
    const shared = createSharedState(layout, 5);
    const gens = [0, 1, 2, 3].map(() => make({ state: sharedStateCell(shared) }));
    const ids = [...Array(300)].flatMap(() => gens.map((g) => g.nextIdSync()));
    expect(new Set(ids).size).toBe(ids.length);
    // A generator on its own state, or on another shared state, next to them is refused.
    expect(() => make()).toThrow(DuplicateGeneratorError);
    expect(() => make({ state: sharedStateCell(createSharedState(layout, 5)) })).toThrow(
      DuplicateGeneratorError,
    );
  });

  it('worker threads sharing one state with the main thread are not refused', async () => {
    const shared = createSharedState(layout, 5);
    make({ state: sharedStateCell(shared) });
    const engine = new URL('../dist/index.js', import.meta.url).href;
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      import(${JSON.stringify(engine)}).then(({ IdGenerator, checkGeneratorOptions, defineLayout, sharedStateCell }) => {
        const layout = defineLayout(workerData.spec);
        const gens = [0, 1].map(() => new IdGenerator(checkGeneratorOptions({ layout, machineId: 5, state: sharedStateCell(workerData.shared), sameMachineId: 'refuse' })));
        const ids = [];
        for (let i = 0; i < 500; i++) for (const g of gens) ids.push(String(g.nextIdSync()));
        parentPort.postMessage(ids);
      }, (error) => parentPort.postMessage({ error: String(error) }));
    `;
    const run = () =>
      new Promise<string[]>((resolve, reject) => {
        const worker = new Worker(code, { eval: true, workerData: { spec: SONYFLAKE_SPEC, shared } });
        worker.once('message', (message) =>
          Array.isArray(message) ? resolve(message) : reject(new Error(message.error)),
        );
        worker.once('error', reject);
      });
    const all = (await Promise.all([run(), run(), run()])).flat();
    expect(all).toHaveLength(3000);
    expect(new Set(all).size).toBe(3000);
  });

  it("the opt-out: sameMachineId 'allow', or IDS_SAME_MACHINE_ID=allow for a process", () => {
    make();
    make({ sameMachineId: 'allow' });
    vi.stubEnv('IDS_SAME_MACHINE_ID', 'allow');
    make({ sameMachineId: undefined });
  });

  it('a bad setting is InvalidArgumentError saying what was expected', () => {
    expect(() => make({ sameMachineId: 'yes' as never })).toThrow(
      "sameMachineId: expected 'allow' or 'refuse', received \"yes\" (string)",
    );
    vi.stubEnv('IDS_SAME_MACHINE_ID', '1');
    expect(() => make({ sameMachineId: undefined })).toThrow(InvalidArgumentError);
    expect(() => make({ sameMachineId: undefined })).toThrow(/IDS_SAME_MACHINE_ID: expected/);
  });
});
