// The design's database-assigned worker ID: insert a row for this host once, take the number
// the database assigned as the machine ID, and keep it in a local file so a restart reuses it.
// One provider per dialect (PostgreSQL and PGlite; MySQL), over one shared core.
import { hostname, networkInterfaces } from 'node:os';
import { InvalidArgumentError, type MachineIdProvider } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { keptMachineId } from '@ids/machine-file';
import { MachineIdExhaustedError } from './errors.js';
import { type MysqlPool, mysqlDialect, STATEMENT_TIMEOUT_MS } from './mysql-dialect.js';
import { checkIdentifier, createQuietly, type SqlClient } from './sql.js';
import { storedMaxId } from './store.js';

/** How `sqlMachineId` and `mysqlMachineId` register the host (all but where the row goes). */
export interface MachineRowOptions {
  /** The file that keeps the assigned machine ID (see keptMachineId). Required. */
  readonly path: string;
  /** The table of hosts. Default "ids_worker"; a plain lower-case identifier. */
  readonly table?: string;
  /** Recorded with the row. Default: os.hostname(). */
  readonly host?: string;
  /** Recorded with the row. Default: the first non-internal address of os.networkInterfaces(), or none. */
  readonly address?: string;
}

/** How `sqlMachineId` registers the host. */
export interface SqlMachineIdOptions extends MachineRowOptions {
  /** Where the row is inserted: a `SqlSegmentStore`'s `sql`, a pg Pool, or a PGlite instance. Required. */
  readonly sql: SqlClient;
}

/** How `mysqlMachineId` registers the host. */
export interface MysqlMachineIdOptions extends MachineRowOptions {
  /** Where the row is inserted: a `MysqlSegmentStore`'s `mysql`, or a mysql2 promise pool. Required. */
  readonly mysql: MysqlPool;
}

function firstAddress(): string | null {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (!entry.internal) return entry.address;
  }
  return null;
}

/**
 * The shared core: checks the row options, and on a host without its file inserts one row
 * (through `insert`, which resolves with the number the database assigned), refuses a number
 * past the machine field, and keeps the rest in the file.
 */
function assignedMachineId(
  options: MachineRowOptions,
  insert: (table: string, host: string, address: string | null) => Promise<unknown>,
): MachineIdProvider {
  const table = checkIdentifier(options.table ?? 'ids_worker', 'table');
  for (const key of ['host', 'address'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'string') {
      throw new InvalidArgumentError(`${key}: expected a string, received ${received(options[key])}`);
    }
  }
  return keptMachineId({
    path: options.path,
    fallback: async ({ bits }) => {
      const assigned = await insert(table, options.host ?? hostname(), options.address ?? firstAddress());
      const id = storedMaxId(assigned, `table ${table}`);
      const max = 2n ** BigInt(bits) - 1n;
      if (id > max) {
        throw new MachineIdExhaustedError(
          `table ${table} assigned machine ID ${id}; expected one from 0 to ${max} (${bits} bits). It is not wrapped: widen the machine field or clear rows of hosts that are gone`,
        );
      }
      return Number(id);
    },
  });
}

/**
 * A machine-ID provider: the first time on a host (no file at `path`) it inserts a row (host
 * name, address, time) into `table` and uses the number the database assigned (0, 1, 2, ...
 * from an identity column) as the machine ID, then keeps it in the file through keptMachineId;
 * later starts read the file and never touch the database. The provider is asynchronous: use
 * a generator's `create`.
 *
 * It cannot see a host rebuilt without its file: that host inserts a new row and takes a new
 * number, and the old one is never reused (numbers are not recycled).
 *
 * @throws (from the provider) KeptFallbackError whose `cause` is MachineIdExhaustedError when
 * the assigned number no longer fits the machine field (never wrapped), or the database's error;
 * the errors of keptMachineId for the file. InvalidArgumentError at once for bad options.
 */
export function sqlMachineId(options: SqlMachineIdOptions): MachineIdProvider {
  if (typeof options?.sql?.query !== 'function') {
    throw new InvalidArgumentError(`sql: expected a client with query(), received ${received(options?.sql)}`);
  }
  const { sql } = options;
  return assignedMachineId(options, async (table, host, address) => {
    await createQuietly(
      sql,
      `CREATE TABLE IF NOT EXISTS ${table} (
        id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 0 START WITH 0) PRIMARY KEY,
        host text NOT NULL,
        address text,
        created_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await sql.query(
      `INSERT INTO ${table} (host, address) VALUES ($1, $2) RETURNING id::text AS id`,
      [host, address],
    );
    return (rows[0] as { id?: unknown } | undefined)?.id;
  });
}

/**
 * `sqlMachineId` on MySQL or MariaDB, the design's statements: `INSERT INTO ids_worker (host,
 * address) VALUES (...)`, then `SELECT LAST_INSERT_ID()` on the same connection. Numbers come
 * from AUTO_INCREMENT, so they start at 1 (and follow the server's auto_increment_increment).
 * Every first start inserts its own row: two processes on one host with the same address, each
 * with its own file, get two numbers.
 *
 * @throws as sqlMachineId.
 */
export function mysqlMachineId(options: MysqlMachineIdOptions): MachineIdProvider {
  if (typeof options?.mysql?.getConnection !== 'function') {
    throw new InvalidArgumentError(
      `mysql: expected a mysql2 promise pool (or a MysqlSegmentStore's mysql), received ${received(options?.mysql)}`,
    );
  }
  const { mysql } = options;
  return assignedMachineId(options, async (table, host, address) => {
    const where = `mysql table ${table}`;
    const db = mysqlDialect(mysql, STATEMENT_TIMEOUT_MS, 'machine-id');
    await db.session(where, (run) =>
      run(`CREATE TABLE IF NOT EXISTS \`${table}\` (
        id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
        host varchar(255) NOT NULL,
        address varchar(64),
        created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
      ) ENGINE=InnoDB`),
    );
    // LAST_INSERT_ID() belongs to the connection: both statements run on the same one.
    return db.session(where, async (run) => {
      await run(`INSERT INTO \`${table}\` (host, address) VALUES (?, ?)`, [host, address]);
      return (await run('SELECT CAST(LAST_INSERT_ID() AS CHAR) AS id')).rows[0]?.id;
    });
  });
}
