// The Node built-ins this package uses only when a provider runs, loaded then instead of with the
// package. A static import costs every importer of @ids/machine-ip (and of @ids/sonyflake, which
// re-exports it) even with a machine ID given: node:http loads streams, net and the HTTP parser
// (~7 ms CPU), and an ES module importing node:fs builds fs's ESM facade, whose read of every
// export pulls in the stream stack too (~2.5 ms). test/cold-start.test.ts keeps them out.
import { createRequire } from 'node:module';

interface Builtins {
  'node:fs': typeof import('node:fs');
  'node:http': typeof import('node:http');
  'node:os': typeof import('node:os');
}

// Node before 20.16 has no process.getBuiltinModule. Only built-ins are asked for, so the base
// path of the fallback require does not matter; process.execPath is just an absolute one.
let fallback: NodeJS.Require | undefined;

/** The built-in module `id`, loaded (synchronously) on the first call. */
export function builtin<Id extends keyof Builtins>(id: Id): Builtins[Id] {
  if (typeof process.getBuiltinModule === 'function') return process.getBuiltinModule(id);
  fallback ??= createRequire(process.execPath);
  return fallback(id) as Builtins[Id];
}
