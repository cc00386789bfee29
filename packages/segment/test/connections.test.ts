// Issue 33 item 4: what the SQL stores make of a connection string they cannot use and of a
// server that is not there. A bad string is InvalidArgumentError before anything is dialled, and
// its password is in no part of the error (message, cause, any field); a closed port is
// StoreUnavailableError from every entry point, never the socket's own error.
import { inspect } from 'node:util';
import { InvalidArgumentError } from '@ids/engine';
import { closedLoopbackEndpoint, hasMariadb, serverForSuite, startMariadb } from '@ids/test-services';
import { Redis } from 'ioredis';
import { createPool } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import {
  mysqlStore,
  openSegmentStore,
  postgresStore,
  redisStore,
  type SegmentStore,
  Segments,
  StoreUnavailableError,
} from '../src/index.js';

/** The password of every URL here: no error may show it, in any form. */
const SECRET = 's3cr3t-pw';

/** The whole error as a log would show it: inspect (hidden fields, causes) and JSON. */
function everything(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  return [
    inspect(error, { depth: 10, showHidden: true }),
    JSON.stringify(error),
    JSON.stringify(cause),
    String(error),
  ].join('\n');
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection, the promise resolved');
    },
    (error: unknown) => error as Error,
  );
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  return Number(new URL(await closedLoopbackEndpoint()).port);
}

describe('a connection string the store cannot use: InvalidArgumentError, the password nowhere', () => {
  it.each([
    ['mysql://user:s3cr3t-pw@127.0.0.1:99999/leaf', /a port from 1 to 65535/],
    ['mysql://user:s3cr3t-pw@127.0.0.1:abc/leaf', /not a URL/],
    ['mysql://user:s3cr3t-pw@127.0.0.1:0/leaf', /the port must be 1 to 65535/],
    ['mysql://user:s3cr3t-pw@127.0.0.1:3306', /it names no database/],
    ['mysql://user:s3cr3t-pw@127.0.0.1:3306/', /it names no database/],
    ['mysql://user:s3cr3t-pw@127.0.0.1:3306/a/b', /it names a path, not a database/],
    ['mysql://user:s3cr3t-pw%zz@127.0.0.1:3306/leaf', /the password is not valid percent-encoding/],
    ['mysql://user:s3cr3t-pw@127.0.0.1:3306/leaf?charset=nope', /Unknown charset 'nope'/],
    [
      'postgres://user:s3cr3t-pw@127.0.0.1:5432/leaf',
      /expected a mysql:\/\/user:password@host:port\/database URL, received "postgres:\/\/user:\*\*\*@/,
    ],
  ])('mysqlStore(%j)', async (connectionString, why) => {
    const error = await rejection(mysqlStore({ connectionString }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).option).toBe('connectionString');
    expect(error.message).toMatch(
      /^connectionString: expected a mysql:\/\/user:password@host:port\/database URL/,
    );
    expect(error.message).toContain('received "');
    expect(error.message).toMatch(why);
    expect(error.message).toContain('user:***@');
    expect(everything(error)).not.toContain(SECRET);
  });

  it('both a connection string and a client: the string is shown without its password', async () => {
    const pool = { getConnection: async () => Promise.reject(new Error('never called')) };
    for (const open of [
      () => mysqlStore({ connectionString: `mysql://u:${SECRET}@127.0.0.1:3306/leaf`, client: pool }),
      () =>
        postgresStore({
          connectionString: `postgres://u:${SECRET}@127.0.0.1:5432/leaf`,
          client: { query: async () => ({ rows: [] }) },
        }),
    ]) {
      const error = await rejection(open());
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.message).toMatch(
        /expected exactly one of connectionString and client, received "\w+:\/\/u:\*\*\*@/,
      );
      expect(everything(error)).not.toContain(SECRET);
    }
  });

  it.each([
    'postgres://user:s3cr3t-pw@127.0.0.1:99999/leaf',
    'postgresql://user:s3cr3t-pw@127.0.0.1:abc/leaf',
  ])('postgresStore(%j), before any query', async (connectionString) => {
    const error = await rejection(postgresStore({ connectionString }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toMatch(
      /^connectionString: expected a postgres:\/\/ URL pg can read, received "postgres(ql)?:\/\/user:\*\*\*@/,
    );
    expect(everything(error)).not.toContain(SECRET);
  });

  it('openSegmentStore with a scheme it does not know shows the string without its password', async () => {
    const error = await rejection(openSegmentStore(`mysqlx://user:${SECRET}@127.0.0.1:33060/leaf`));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toContain('received "mysqlx://user:***@127.0.0.1:33060/leaf"');
    expect(everything(error)).not.toContain(SECRET);
  });
});

describe('a server that is not there (a closed loopback port): StoreUnavailableError from every entry point', () => {
  /** Every entry point of `open()`'s store, each expected to reject with StoreUnavailableError naming `name`. */
  async function expectUnavailable(
    name: string,
    open: () => Promise<SegmentStore>,
    reason: RegExp = /ECONNREFUSED/,
  ): Promise<void> {
    const store = await open();
    try {
      for (const call of [
        () => store.createTag('t', { after: 0n }),
        () => store.allocate('t', 10),
        () => Segments.create({ store, tag: 't' }),
      ]) {
        const error = await rejection(call());
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect(error).toMatchObject({ store: name, feature: 'segment', code: 'ERR_IDS_STORE_UNAVAILABLE' });
        expect(error.message.startsWith(`${name}: `), error.message).toBe(true);
        expect(error.message).toMatch(reason);
        expect(everything(error)).not.toContain(SECRET);
      }
    } finally {
      await store.close();
    }
  }

  it('MySQL: leaf, ticket and step/offset schemes, and through openSegmentStore', async () => {
    const url = `mysql://root:${SECRET}@127.0.0.1:${await closedPort()}/leaf`;
    await expectUnavailable('mysql', () => mysqlStore({ connectionString: url, timeoutMs: 2000 }));
    await expectUnavailable('mysql', () =>
      mysqlStore({ connectionString: url, scheme: 'ticket', timeoutMs: 2000 }),
    );
    await expectUnavailable('mysql', () =>
      mysqlStore({ connectionString: url, stepOffset: { servers: 2, offset: 1 }, timeoutMs: 2000 }),
    );
    await expectUnavailable('mysql', () => openSegmentStore(url));
  });

  it('PostgreSQL: the table and the sequence scheme, and through openSegmentStore', async () => {
    const url = `postgres://postgres:${SECRET}@127.0.0.1:${await closedPort()}/leaf`;
    await expectUnavailable('postgres', () => postgresStore({ connectionString: url, timeoutMs: 2000 }));
    await expectUnavailable('postgres', () =>
      postgresStore({
        connectionString: url,
        stepOffset: { servers: 2, offset: 1, blockSize: 10 },
        timeoutMs: 2000,
      }),
    );
    await expectUnavailable('postgres', () => openSegmentStore(url));
  });

  it("Redis through a user's client that cannot connect (the store's own URL is refused at open)", async () => {
    const client = new Redis({
      host: '127.0.0.1',
      port: await closedPort(),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await expectUnavailable('redis', () => redisStore({ client }), /expected Redis to answer/);
    } finally {
      client.disconnect();
    }
  });
});

describe.skipIf(!hasMariadb())('MySQL (MariaDB): what the server refuses about the connection', () => {
  const suite = serverForSuite(startMariadb);

  it('a pool that names no database: createTag is InvalidArgumentError (no database selected), as Segments.create is', async () => {
    const url = new URL(suite.server.url);
    url.pathname = '/';
    const pool = createPool({ uri: url.href, connectionLimit: 1 });
    try {
      for (const scheme of ['leaf', 'ticket'] as const) {
        const store = await mysqlStore({ client: pool, scheme });
        const error = await rejection(store.createTag('t', { after: 0n }));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect(error.message).toMatch(/the connection names no database/);
        await expect(Segments.create({ store, tag: 't' })).rejects.toBeInstanceOf(InvalidArgumentError);
      }
    } finally {
      await pool.end();
    }
  });

  it('a wrong password: InvalidArgumentError from createTag, the password in no part of it', async () => {
    const admin = createPool({ uri: suite.server.url, connectionLimit: 1 });
    try {
      await admin.query(`CREATE USER IF NOT EXISTS 'ids_pw'@'127.0.0.1' IDENTIFIED BY 'right-one'`);
      await admin.query(`GRANT ALL ON ids.* TO 'ids_pw'@'127.0.0.1'`);
    } finally {
      await admin.end();
    }
    const url = new URL(suite.server.url);
    url.username = 'ids_pw';
    url.password = SECRET;
    const store = await mysqlStore({ connectionString: url.href });
    const error = await rejection(store.createTag('t', { after: 0n }));
    await store.close();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toMatch(/the server refused the user or password/);
    expect(everything(error)).not.toContain(SECRET);
  });
});
