import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { type Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { claimHostMachineId } from '@ids/machine-file';
import { openSegmentStore } from '@ids/segment';
import { tempDirs } from '@ids/test-services';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

/** The built bin, as `npx ids-server` runs it. */
export const BIN = join(__dirname, '..', 'dist', 'bin.js');

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of several shapes, checked field by field
  json: any;
}

/** One request with the path sent exactly as given (fetch would normalise it). */
export function call(
  base: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; agent?: Agent; localAddress?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method,
        agent: options.agent ?? false,
        path,
        headers: options.headers,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Writes raw bytes to the server and reads until it closes the connection. */
export async function raw(port: number, bytes: string | string[], gapMs = 0): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  for (const part of Array.isArray(bytes) ? bytes : [bytes]) {
    socket.write(part);
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  await once(socket, 'close');
  return text;
}

export function expectError(reply: Reply, status: number, code: string, message?: RegExp) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(Object.keys(reply.json)).toEqual(['error']);
  expect(reply.json.error.code).toBe(code);
  if (message) expect(reply.json.error.message).toMatch(message);
  expect(reply.text).not.toMatch(/\n\s+at /);
}

/** A temporary directory, deleted after the test file. */
export const scratch: () => string = tempDirs('ids-server-test-');

export interface BinRun {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything written to stdout so far. */
  out(): string;
  err(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawns `ids-server` with `env` (over a clean environment) and `args`, capturing its output. */
function spawnBin(env: Record<string, string>, args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { out: '', err: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output.out += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output.err += chunk;
  });
  return { child, output, exited: once(child, 'exit') };
}

/**
 * Starts `ids-server` (PORT 0 and no drain on SIGTERM, unless `env` says otherwise); resolves
 * once it listens.
 */
export async function startBin(env: Record<string, string>, args: string[] = []): Promise<BinRun> {
  const { child, output, exited } = spawnBin({ PORT: '0', IDS_DRAIN_MS: '0', ...env }, args);
  const url = await new Promise<string>((resolve, reject) => {
    // Started is the whole start-up block: the listening line, then one line (and its trail)
    // per slot, each its own write; a test that reads the block must not see half of it.
    child.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+) with machine IDs? ([\d, ]+)/.exec(output.out);
      if (!match) return;
      const last = (match[2] as string).split(',').length - 1;
      if (output.out.includes(`slot ${last}: `) && output.out.endsWith('\n')) resolve(match[1] as string);
    });
    void exited.then(([code]) =>
      reject(new Error(`ids-server exited with ${code} before listening: ${output.out}${output.err}`)),
    );
  });
  return {
    url,
    port: Number(new URL(url).port),
    child,
    out: () => output.out,
    err: () => output.err,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      const [code] = await exited;
      return code as number | null;
    },
  };
}

/** Runs `ids-server` to its exit (for configurations that must not start). */
export async function runBin(env: Record<string, string>, args: string[] = []) {
  const { output, exited } = spawnBin(env, args);
  const [code] = await exited;
  return { code: code as number | null, out: output.out, err: output.err };
}

/**
 * Checks a real response against the OpenAPI document: the operation and status must be
 * described, and a JSON body must match its schema.
 */
export function matchesSpec(
  // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document walked by key
  doc: any,
  method: string,
  path: string,
  reply: Reply,
): void {
  const operation = doc.paths[path]?.[method.toLowerCase()];
  expect(operation, `${method} ${path} is in the document`).toBeDefined();
  const response = operation.responses[String(reply.status)];
  expect(response, `${method} ${path} ${reply.status} is described`).toBeDefined();
  const media = response.content?.['application/json'];
  if (!media) {
    if (response.content)
      expect(Object.keys(response.content)[0]).toBe(String(reply.headers['content-type']).split(';')[0]);
    else expect(reply.text).toBe('');
    return;
  }
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  const validate = ajv.compile({ ...media.schema, components: doc.components });
  const ok = validate(reply.json);
  expect(
    ok,
    `${method} ${path} ${reply.status}: ${JSON.stringify(validate.errors)} for ${reply.text.slice(0, 300)}`,
  ).toBe(true);
}

/** The operator's one explicit act: creates `tags` in `store` (first ID `after + 1`). */
export async function createTags(store: string, tags: readonly string[], after = 0n): Promise<void> {
  const opened = await openSegmentStore(store);
  try {
    for (const tag of tags) await opened.createTag(tag, { after });
  } finally {
    await opened.close();
  }
}

/**
 * The ceiling for waiting on an event (a reconnect, a renewal): a last resort that only a broken
 * run reaches, generous enough for a machine busy with other work.
 */
export const WAIT_MS = 45_000;

/**
 * Calls `attempt` every `everyMs` until `done` accepts its result, and returns that result; after
 * WAIT_MS it returns the last one, for the test's own `expect` to say what it was.
 */
export async function pollUntil<T>(attempt: () => Promise<T>, done: (result: T) => boolean, everyMs = 50) {
  const end = performance.now() + WAIT_MS;
  let result = await attempt();
  while (!done(result) && performance.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    result = await attempt();
  }
  return result;
}

/**
 * Another process takes the server's claim file of machine ID `id`, as one that found it free
 * would: this test process's identity (pid, start time, host, boot) written into it. The
 * server's slot is fenced on its next renewal and claims the lowest ID free to it again.
 */
export async function takeClaim(dir: string, id: number): Promise<void> {
  const mine = claimHostMachineId(16, { dir: scratch(), releaseOnExit: false });
  const me = JSON.parse(readFileSync(mine.path, 'utf8'));
  await mine.release();
  const file = join(dir, `${id}.claim`);
  const record = JSON.parse(readFileSync(file, 'utf8'));
  const taken = {
    ...record,
    pid: me.pid,
    start: me.start,
    host: me.host,
    boot: me.boot,
    nonce: 'f'.repeat(24),
  };
  writeFileSync(`${file}.tmp`, JSON.stringify(taken));
  renameSync(`${file}.tmp`, file);
}
