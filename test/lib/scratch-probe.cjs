// Copied into the scratch project that installed the packed tarballs, and run there by
// packaging.test.ts: `node scratch-probe.cjs esm|cjs @ids/a @ids/b ...`. It loads each package
// the way a consumer would (`import()` resolves the "import" condition, `require` the "require"
// one), lists its runtime exports, and drives the generators it knows. It prints one JSON object.
'use strict';

const mode = process.argv[2];
const names = process.argv.slice(3);

/** @param {string} name */
function load(name) {
  if (mode === 'esm') return import(name);
  if (mode === 'cjs') return Promise.resolve(require(name));
  throw new Error(`expected mode esm or cjs, received ${JSON.stringify(mode)}`);
}

/** Catches what a call throws, as plain data the test can assert on. */
function failure(fn) {
  try {
    fn();
    return null;
  } catch (error) {
    return { name: error.name, code: error.code, message: error.message, error };
  }
}

/**
 * Generators the probe knows how to drive, by export name. A package exporting none of these is
 * still loaded and has its export names checked against its type declarations.
 */
const recipes = {
  async Sonyflake(m) {
    const sonyflake = new m.Sonyflake({ machineId: 1 });
    const ids = [sonyflake.nextIdSync(), await sonyflake.nextId(), ...(await sonyflake.nextIds(300))];
    const last = sonyflake.decompose(ids.at(-1));
    await sonyflake.close();
    const created = await m.Sonyflake.create({ machineId: 2 });
    const createdId = await created.nextId();
    await created.close();
    const bad = failure(() => new m.Sonyflake({ machineId: 65536 }));
    return {
      ids: ids.map(String),
      lastMachine: last.machine,
      createdMachine: created.decompose(createdId).machine,
      badMachineId: bad && { name: bad.name, code: bad.code, isIdsError: bad.error instanceof m.IdsError },
    };
  },
  async IdGenerator(m) {
    const layout = m.defineLayout({
      name: 'probe',
      timeBits: 41,
      timeUnitMs: 1,
      sequenceBits: 12,
      machineBits: 10,
      epochMs: Date.UTC(2020, 0, 1),
    });
    const generator = new m.IdGenerator(m.checkGeneratorOptions({ layout, machineId: 5 }));
    const ids = [generator.nextIdSync(), ...(await generator.nextIds(5000))];
    const last = generator.decompose(ids.at(-1));
    await generator.close();
    const bad = failure(() => m.parseId('12a'));
    return {
      ids: ids.map(String),
      lastMachine: last.machine,
      badId: bad && { name: bad.name, code: bad.code, isIdsError: bad.error instanceof m.IdsError },
    };
  },
};

async function main() {
  const report = {};
  for (const name of names) {
    const entry = { exports: [], smoke: {} };
    report[name] = entry;
    try {
      const m = await load(name);
      entry.exports = Object.keys(m).sort();
      for (const [exportName, recipe] of Object.entries(recipes)) {
        if (typeof m[exportName] === 'function') entry.smoke[exportName] = await recipe(m);
      }
    } catch (error) {
      entry.error =
        error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error);
    }
  }
  process.stdout.write(JSON.stringify(report));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
