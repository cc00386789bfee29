import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** A server (or a store, a session) as the tests of one `describe` block hold it. */
export interface SuiteServer<S, A> {
  /** Set by beforeAll: read it inside the tests, not where the block is declared. */
  readonly server: S;
  /** The admin client `connect` made on the server (undefined without one). */
  readonly admin: A;
}

/** How `serverForSuite` reaches a started server and ends it. */
export interface SuiteServerOptions<S, A> {
  /** A client for looking at and meddling with the server as an operator would. */
  connect?: (server: S) => A | Promise<A>;
  /** Ends the client (undefined when `connect` failed) and the server, in that order. */
  stop: (server: S, admin: A | undefined) => Promise<void>;
}

/**
 * Starts a server before the tests of the enclosing `describe` (or file) and ends it after them:
 * the one place for the beforeAll/afterAll pair every real-server test needs. Without options
 * the server's own close() ends it. Nothing is ended for a server that never started, and a
 * skipped block (describe.skipIf) starts nothing.
 */
export function serverForSuite<S extends { close(): Promise<void> }>(
  start: () => Promise<S>,
): SuiteServer<S, undefined>;
export function serverForSuite<S, A = undefined>(
  start: () => Promise<S>,
  options: SuiteServerOptions<S, A>,
): SuiteServer<S, A>;
export function serverForSuite<S, A>(
  start: () => Promise<S>,
  options?: SuiteServerOptions<S, A>,
): SuiteServer<S, A> {
  const suite = {} as { server: S; admin: A };
  beforeAll(async () => {
    suite.server = await start();
    if (options?.connect) suite.admin = await options.connect(suite.server);
  });
  afterAll(async () => {
    if (suite.server === undefined) return;
    if (options) await options.stop(suite.server, suite.admin);
    else await (suite.server as { close(): Promise<void> }).close();
  });
  return suite;
}

/**
 * A maker of temporary directories named `<prefix>[<label>-]<random>` for the enclosing `describe` (or
 * file, called at a helper module's top level): each one it makes is deleted after that block's
 * tests, whatever they left in it. Made with mkdtempSync alone they stayed (machine-file's tests
 * left 119 a run): a process 'exit' hook never runs in vitest's workers.
 */
export function tempDirs(prefix: string): (label?: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  });
  return (label) => {
    const dir = mkdtempSync(join(tmpdir(), label === undefined ? prefix : `${prefix}${label}-`));
    made.push(dir);
    return dir;
  };
}
