// The database-assigned machine ID on a real PostgreSQL and a real MySQL (MariaDB): a row per
// host inserted once, kept in a local file, refused (never wrapped) once it no longer fits the field.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, MachineIdProviderError } from '@ids/engine';
import { KeptFallbackError } from '@ids/machine-file';
import { hasMariadb, hasPostgres, serverForSuite, startMariadb, startPostgres } from '@ids/test-services';
import { createPool, type Pool } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MachineIdExhaustedError, mysqlMachineId, sqlMachineId } from '../src/index.js';
import { scratch } from './helpers.js';

/** 20 hosts registering at once, host `i` through `provider(i)`: their machine IDs, by host. */
function twentyHostsAtOnce(provider: (i: number) => ReturnType<typeof sqlMachineId>) {
  return Promise.all(Array.from({ length: 20 }, (_, i) => provider(i)({ bits: 16 })));
}

/**
 * Registers hosts into a 2-bit machine field: the database assigns `fitting`, then a number past
 * the field, which is refused (MachineIdExhaustedError as the cause), never wrapped or truncated,
 * and not kept in its file.
 */
async function expectRefusedPastField(
  provider: (path: string) => ReturnType<typeof sqlMachineId>,
  dir: string,
  fitting: readonly number[],
): Promise<void> {
  const ids: unknown[] = [];
  for (let i = 0; i < fitting.length; i++) {
    ids.push(await provider(join(dir, `tiny${i}`, 'id'))({ bits: 2 }));
  }
  expect(ids).toEqual(fitting);
  const path = join(dir, `tiny${fitting.length}`, 'id');
  const error = await Promise.resolve()
    .then(() => provider(path)({ bits: 2 }))
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(KeptFallbackError);
  expect((error as Error).cause).toBeInstanceOf(MachineIdExhaustedError);
  expect(((error as Error).cause as Error).message).toMatch(
    /assigned machine ID 4; expected one from 0 to 3/,
  );
  expect(existsSync(path)).toBe(false);
}

describe.skipIf(!hasPostgres())('sqlMachineId on PostgreSQL', () => {
  const tmp = scratch();
  afterAll(() => tmp.remove());
  const suite = serverForSuite(startPostgres);
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: suite.server.url, max: 20 });
    // Clients the pool lets go on end() are closed after end() resolves; the server stopping
    // meanwhile must not raise an unhandled 'error' on them. An idle client's error is passed on
    // to the pool's 'error' event, which throws when the pool has no listener of its own.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
  });
  afterAll(async () => {
    await pool?.end();
  });

  it('20 hosts registering at once get 20 distinct numbers, 0 to 19, each kept in its file', async () => {
    const ids = await twentyHostsAtOnce((i) =>
      sqlMachineId({
        sql: pool,
        path: join(tmp.dir, `host${i}`, 'machine-id'),
        host: `host${i}`,
        table: 'fleet',
      }),
    );
    expect([...ids].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (let i = 0; i < 20; i++) {
      expect(readFileSync(join(tmp.dir, `host${i}`, 'machine-id'), 'utf8')).toBe(`${ids[i]}\n`);
    }
    const { rows } = await pool.query('SELECT host, address, created_at FROM fleet ORDER BY id');
    expect(rows.length).toBe(20);
    expect(rows[0].created_at).toBeInstanceOf(Date);
  });

  it('a restart reads the file: the same number, no new row', async () => {
    const path = join(tmp.dir, 'restart', 'machine-id');
    const provider = () =>
      sqlMachineId({ sql: pool, path, table: 'restarts', host: 'web-1', address: '127.0.0.1' });
    const first = await provider()({ bits: 16 });
    const again = await provider()({ bits: 16 });
    expect(again).toBe(first);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM restarts');
    expect(rows[0].n).toBe(1);
  });

  it('a number past the machine field is refused (MachineIdExhaustedError as the cause), never wrapped, and not kept', async () => {
    await expectRefusedPastField(
      (path) => sqlMachineId({ sql: pool, path, table: 'tiny' }),
      tmp.dir,
      [0, 1, 2, 3],
    );
  });

  it('drives a Sonyflake through create() (the provider is asynchronous)', async () => {
    const { Sonyflake } = await import('@ids/sonyflake');
    const path = join(tmp.dir, 'sony', 'machine-id');
    const flake = await Sonyflake.create({ machineId: sqlMachineId({ sql: pool, path, table: 'sony' }) });
    const id = await flake.nextId();
    expect(flake.decompose(id).machine).toBe(0);
    await flake.close();
  });

  it('bad options fail at once; a provider error is the generator error cause', async () => {
    expect(() => sqlMachineId({ sql: {} as never, path: 'x' })).toThrow(InvalidArgumentError);
    expect(() => sqlMachineId({ sql: pool, path: 'x', table: 'Drop Table' })).toThrow(InvalidArgumentError);
    expect(() => sqlMachineId({ sql: pool, path: '' })).toThrow(InvalidArgumentError);
    const { Sonyflake } = await import('@ids/sonyflake');
    const dead = { query: async () => Promise.reject(new Error('ECONNREFUSED')) };
    const error = await Sonyflake.create({
      machineId: sqlMachineId({ sql: dead, path: join(tmp.dir, 'dead', 'id') }),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MachineIdProviderError);
  });
});

const WORKER = new URL('./fixtures/mysql-worker.mjs', import.meta.url).pathname;

/** Runs fixtures/mysql-worker.mjs in a process of its own and resolves with the machine ID it printed. */
function workerProcess(job: { url: string; path: string; table: string; address: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [WORKER, JSON.stringify(job)], (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(Number(stdout.trim()));
    });
  });
}

describe.skipIf(!hasMariadb())('mysqlMachineId on MySQL (MariaDB)', () => {
  const tmp = scratch();
  afterAll(() => tmp.remove());
  const suite = serverForSuite(startMariadb);
  let pool: Pool;
  beforeAll(() => {
    pool = createPool({ uri: suite.server.url, connectionLimit: 8 });
  });
  afterAll(async () => {
    await pool?.end();
  });

  it('two processes on one host with the same address get distinct IDs; a restart reads its file, no new row', async () => {
    const job = (name: string) => ({
      url: suite.server.url,
      path: join(tmp.dir, name, 'machine-id'),
      table: 'workers',
      address: '10.0.0.7',
    });
    const [a, b] = await Promise.all([workerProcess(job('a')), workerProcess(job('b'))]);
    expect(a).not.toBe(b);
    expect([a, b].sort()).toEqual([1, 2]);
    expect(readFileSync(job('a').path, 'utf8')).toBe(`${a}\n`);
    expect(await workerProcess(job('a'))).toBe(a);
    const [rows] = await pool.query('SELECT address, count(*) AS n FROM workers GROUP BY address');
    expect(rows).toEqual([{ address: '10.0.0.7', n: 2 }]);
  });

  it('20 hosts registering at once on one pool get 1 to 20 (LAST_INSERT_ID() read on the inserting connection)', async () => {
    const ids = await twentyHostsAtOnce((i) =>
      mysqlMachineId({
        mysql: pool,
        path: join(tmp.dir, `fleet${i}`, 'id'),
        table: 'fleet',
        host: `host${i}`,
      }),
    );
    expect([...ids].sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });

  it('a number past the machine field is refused (MachineIdExhaustedError as the cause), never truncated, and not kept', async () => {
    await expectRefusedPastField(
      (path) => mysqlMachineId({ mysql: pool, path, table: 'tiny' }),
      tmp.dir,
      [1, 2, 3],
    );
  });

  it('an assigned number past 2^53 is read exactly and refused, not rounded', async () => {
    await pool.query(
      'CREATE TABLE huge (id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY, host varchar(255) NOT NULL, address varchar(64), created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP) AUTO_INCREMENT = 9007199254740993',
    );
    const error = await Promise.resolve()
      .then(() =>
        mysqlMachineId({ mysql: pool, path: join(tmp.dir, 'huge', 'id'), table: 'huge' })({ bits: 16 }),
      )
      .catch((e: unknown) => e);
    expect(((error as Error).cause as Error).message).toMatch(/assigned machine ID 9007199254740993;/);
  });

  it('bad options fail at once', () => {
    expect(() => mysqlMachineId({ mysql: {} as never, path: 'x' })).toThrow(InvalidArgumentError);
    expect(() => mysqlMachineId({ mysql: pool, path: 'x', table: 'Drop Table' })).toThrow(
      InvalidArgumentError,
    );
  });
});
