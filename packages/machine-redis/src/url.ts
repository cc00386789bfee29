// Every redis:// URL of @ids is read and opened here: the claims and checks of this package,
// the segment store of @ids/segment and the token store of @ids/server (and so the CLI, which
// goes through those). Left to itself, ioredis reads a database that is not a number as 0, and
// reports a SELECT the server refuses only as an 'error' event, going on in database 0: keys
// meant for database 99 land in database 0 without a word. Here both are typed errors.
import { InvalidArgumentError } from '@ids/engine';
import { errorText, received } from '@ids/engine/internal';
import { Redis, type RedisOptions } from 'ioredis';
import { RedisDatabaseError } from './errors.js';

/** The highest database number SELECT takes (a C int on the server). */
const MAX_DATABASE = 2 ** 31 - 1;

/** A checked URL: the text to dial and the database it names (0 when it names none). */
export interface RedisUrl {
  /** The URL as given, trimmed. */
  readonly url: string;
  /** The database it names: 0 when it names none. */
  readonly database: number;
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(a URL that does not parse)';
  }
}

/**
 * `redis://` or `rediss://`, a host, an optional port and database number, nothing else.
 * @throws InvalidArgumentError naming `option` for anything else, a database that is not a whole
 * number from 0 included.
 */
export function parseRedisUrl(value: unknown, option = 'url'): RedisUrl {
  const expected =
    'expected redis://[[user]:password@]host[:port][/db] or rediss://... (no query or fragment)';
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidArgumentError(`${expected}, received ${received(value)}`, { option });
  }
  const text = value.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError(`${expected}, received ${received(redact(text))}`, { option });
  }
  const path = /^(?:\/([^/]*))?$/.exec(url.pathname);
  if (
    (url.protocol !== 'redis:' && url.protocol !== 'rediss:') ||
    url.hostname === '' ||
    path === null ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new InvalidArgumentError(`${expected}, received ${received(redact(text))}`, { option });
  }
  const db = path[1] ?? '';
  const database = /^\d{1,10}$/.test(db) ? Number(db) : db === '' ? 0 : Number.NaN;
  if (!(database <= MAX_DATABASE)) {
    throw new InvalidArgumentError(
      `the database of ${redact(text)}: expected a database number from 0 to ${MAX_DATABASE.toLocaleString('en-US')}, received ${received(db)}`,
      { option },
    );
  }
  return { url: text, database };
}

/** The server's `databases` setting, or undefined when it will not say (CONFIG refused or renamed). */
async function databaseCount(client: Redis): Promise<number | undefined> {
  try {
    const reply = (await client.config('GET', 'databases')) as unknown;
    const count = Array.isArray(reply) ? Number(reply[1]) : Number.NaN;
    return Number.isSafeInteger(count) && count > 0 ? count : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes sure a connected client is in the database it was asked for. ioredis sent SELECT on
 * connect but kept a refusal to its 'error' event; sending it again gets the refusal as a reply.
 * @throws RedisDatabaseError when the server refuses the database (the message says which one
 * was asked for and which the server has); the client's error when it cannot ask.
 */
export async function checkDatabase(client: Redis, where: string): Promise<void> {
  const database = client.options.db ?? 0;
  if (database === 0) return; // every server has database 0
  try {
    await client.select(database);
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'ReplyError') throw error;
    const count = await databaseCount(client);
    const has =
      count === undefined
        ? 'the server did not say how many it has (CONFIG GET databases was refused)'
        : `the server has databases 0 to ${count - 1} (its databases setting is ${count})`;
    throw new RedisDatabaseError(
      database,
      count,
      `${where}: expected a database the server has, received database ${database}: ${has}; Redis answered ${errorText(error)}`,
      { cause: error },
    );
  }
}

/**
 * An ioredis client on a checked URL, connected and in the database the URL names (`options`
 * are merged over what the URL says). Its errors are reported by the commands that fail: it
 * has a listener that keeps ioredis from printing them.
 * @throws InvalidArgumentError naming `option` for a bad URL, RedisDatabaseError for a database the
 * server refuses, the client's own error when it cannot connect; the client is closed then.
 */
export async function openRedisClient(
  value: unknown,
  options: RedisOptions = {},
  option = 'url',
): Promise<Redis> {
  const { url } = parseRedisUrl(value, option);
  const client = new Redis(url, {
    lazyConnect: true,
    ...(url.startsWith('rediss:') ? { tls: {} } : {}),
    ...options,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await checkDatabase(client, `Redis at ${redact(url)}`);
    return client;
  } catch (error) {
    client.disconnect();
    throw error;
  }
}
