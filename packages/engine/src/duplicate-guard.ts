// The guard against the most common misuse: two live generators in one realm with the same
// layout and machine ID (often a new generator per request). Each keeps its own sequence, so in
// one tick both issue the same IDs. The guard refuses the second at construction, naming where
// the first was made. It sees only this JavaScript realm: another thread (without a shared
// state) or another process with the same machine ID is the machine-ID provider's job (host
// claims, etcd leases).
import { IdsError, InvalidArgumentError, received } from './errors.js';
import type { Layout } from './layout.js';
import type { StateCell } from './options.js';
import { SharedStateCell } from './shared.js';

/** The setting that turns the guard off, for generators whose IDs need only be unique on their own. */
export interface SameMachineIdSetting {
  /**
   * What to do when another live (not closed) generator in this realm has the same layout
   * (epoch, bits, time unit, field order) and machine ID. 'refuse' (default):
   * DuplicateGeneratorError, since the two would issue duplicate IDs. 'allow': for generators
   * whose IDs need only be unique per generator (each writes its own table, say). Generators
   * over one shared state (`state`, e.g. one `createSharedState` per thread) are never refused.
   * Default: the IDS_SAME_MACHINE_ID environment variable ('allow' or 'refuse', for a whole
   * process such as a test suite that builds many generators), else 'refuse'. Another value:
   * InvalidArgumentError.
   */
  readonly sameMachineId?: 'refuse' | 'allow';
}

/** A second live generator with the same layout and machine ID in this realm, without sharing its state. */
export class DuplicateGeneratorError extends IdsError {
  readonly code = 'ERR_IDS_DUPLICATE_GENERATOR';
  override readonly name = 'DuplicateGeneratorError';
}

interface Entry {
  readonly generator: WeakRef<object>;
  /** Where the generator was constructed: the first stack frame outside the @ids packages. */
  readonly site: string;
  /** What the generator's state is shared through (undefined: its own, unshared state). */
  readonly share: object | undefined;
}

const live = new Map<string, Entry[]>();

function keyOf(layout: Layout, machineId: number): string {
  const { epochMs, timeBits, timeUnitMs, sequenceBits, machineBits, fieldOrder } = layout;
  return `${epochMs}/${timeBits}/${timeUnitMs}/${sequenceBits}/${machineBits}/${fieldOrder}#${machineId}`;
}

// Frames of the @ids packages themselves (source or built, in the workspace or installed), of
// Node, and of built-ins without a file are skipped: the site worth naming is the caller's.
const OWN_DIR = String.raw`[\\/](?:@ids[\\/][^\\/]+|packages[\\/](?:engine|sonyflake|snowflake))[\\/](?:src|dist)[\\/]`;
/** An own frame, as a line of a formatted stack. */
const OWN_FRAME = new RegExp(`${OWN_DIR}|node:internal|\\(<anonymous>\\)`);
/** An own frame's file, as a call site names it. */
const OWN_FILE = new RegExp(`${OWN_DIR}|^node:internal`);

function isOwn(frame: string | NodeJS.CallSite): boolean {
  if (typeof frame === 'string') return OWN_FRAME.test(frame);
  const file = frame.getFileName();
  return file ? OWN_FILE.test(file) : !frame.isEval();
}

// The call sites as V8 records them rather than the formatted stack: formatting every frame
// (Node's formatter, and the source positions of each frame's function, which V8 computes by
// parsing the function again) cost more than the rest of a cold start's first ID. Only the frame
// named is formatted, as the stack would show it. Where stacks are source-mapped
// (--enable-source-maps, tsx), the formatted stack is read as before: it names the source line.
const callSites = (_error: Error, sites: NodeJS.CallSite[]) => sites;

function creationSite(): string {
  const { prepareStackTrace, stackTraceLimit } = Error;
  const mapped = globalThis.process?.sourceMapsEnabled === true;
  let stack: unknown;
  try {
    // The default limit (10) can end inside create()'s own frames, before the caller's.
    Error.stackTraceLimit = 40;
    if (!mapped) Error.prepareStackTrace = callSites;
    stack = new Error().stack;
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
    Error.prepareStackTrace = prepareStackTrace;
  }
  const frames: Array<string | NodeJS.CallSite> = Array.isArray(stack)
    ? stack
    : String(stack ?? '')
        .split('\n')
        .slice(1);
  const outside = frames.find((frame) => !isOwn(frame)) ?? frames[0] ?? '';
  return String(outside).trim().replace(/^at /, '') || 'an unknown place';
}

function describeLayout(layout: Layout): string {
  const epoch = new Date(layout.epochMs).toISOString();
  return `${layout.name} (epoch ${epoch}, ${layout.timeBits} time bits of ${layout.timeUnitMs} ms, ${layout.sequenceBits} sequence bits, ${layout.machineBits} machine bits)`;
}

/** What a generator's state is shared through: the memory of a SharedStateCell, else the cell itself. */
export function shareOf(state: StateCell | undefined): object | undefined {
  return state instanceof SharedStateCell ? state.buffer : state;
}

/** The environment variable that sets the default of `sameMachineId` for a process. */
export const SAME_MACHINE_ID_ENV = 'IDS_SAME_MACHINE_ID';

/** The `sameMachineId` setting, or IDS_SAME_MACHINE_ID when it is not given. @throws InvalidArgumentError for another value. */
export function checkSameMachineId(value: unknown): 'allow' | 'refuse' {
  const fromEnv = value === undefined;
  const chosen = fromEnv ? (globalThis.process?.env?.[SAME_MACHINE_ID_ENV] ?? 'refuse') : value;
  if (chosen === 'allow' || chosen === 'refuse') return chosen;
  throw new InvalidArgumentError(
    `${fromEnv ? SAME_MACHINE_ID_ENV : 'sameMachineId'}: expected 'allow' or 'refuse', received ${received(chosen)}`,
  );
}

/**
 * Records a generator as live for its layout and machine ID, and returns the function that
 * frees the record (call it from close()). The machine ID was checked against the layout first.
 *
 * @throws DuplicateGeneratorError when another live generator of this realm has the same
 * layout and machine ID, unless both share one state or `sameMachineId` is 'allow' (checked by
 * checkSameMachineId, with the generator's other options).
 */
export function enterLive(
  generator: object,
  layout: Layout,
  machineId: number,
  share: object | undefined,
  sameMachineId: 'allow' | 'refuse',
): () => void {
  // The machine ID's range was checked with the generator's options.
  if (sameMachineId === 'allow') return () => undefined;
  const key = keyOf(layout, machineId);
  // A generator dropped without close() no longer counts once it has been garbage-collected.
  const entries = (live.get(key) ?? []).filter((entry) => entry.generator.deref() !== undefined);
  const other = entries.find((entry) => share === undefined || entry.share !== share);
  if (other) {
    throw new DuplicateGeneratorError(
      `another live generator has the layout ${describeLayout(layout)} and machine ID ${machineId}: it was created at ${other.site}. Two generators with one layout and machine ID issue the same IDs. Create one generator and share it (pass it around, or export it from a module), close() the first before creating the next, or give each its own machine ID; if each generator's IDs need only be unique on their own (one table each), set sameMachineId: 'allow'`,
    );
  }
  const entry: Entry = { generator: new WeakRef(generator), site: creationSite(), share };
  entries.push(entry);
  live.set(key, entries);
  let left = false;
  return () => {
    if (left) return;
    left = true;
    const rest = (live.get(key) ?? []).filter((e) => e !== entry);
    if (rest.length > 0) live.set(key, rest);
    else live.delete(key);
  };
}
