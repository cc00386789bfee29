// Flags and environment to options. A flag wins over its variable; a value that cannot be read
// is a ServerConfigError naming both.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LAYOUT_NAMES } from '@ids/engine';
import {
  HELP_WIDTH,
  joinNegativeValues,
  type OptionSpec,
  optionErrorText,
  parseMachineIds,
  wrapWords,
} from '@ids/engine/internal';
import { ServerConfigError } from './errors.js';
import { IDEMPOTENCY_LOCK_TTL_MS } from './idempotency.js';
import {
  DEFAULT_DRAIN_MS,
  DEFAULT_MAX_COUNT,
  DEFAULT_PUBLIC_RATE_LIMIT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_TOKEN_TTL_SECONDS,
  type IdServerOptions,
  MAX_COUNT_LIMIT,
  MAX_DRAIN_MS,
} from './options.js';
import { machineIdSources, splitList } from './sources.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `ids-server`'s flags, the one declaration of each: its environment variable, what it does and
 * its default. `--help` and the README's flag table are both written from it (the table by
 * test/readme-flags.test.ts), and the defaults come from the constants the code applies.
 */
const FLAGS = {
  host: { type: 'string', env: 'HOST', help: 'address to listen on', default: '127.0.0.1' },
  port: { type: 'string', env: 'PORT', help: 'TCP port, 0 for a free one', default: '8080' },
  layout: { type: 'string', env: 'IDS_LAYOUT', help: LAYOUT_NAMES.join(', '), default: 'sonyflake' },
  machines: {
    type: 'string',
    env: 'IDS_MACHINES',
    help: 'generators (machine IDs) in this process, 1-64',
    default: 'one per --machine-id, else 1',
  },
  'machine-id-source': {
    type: 'string',
    env: 'IDS_MACHINE_ID_SOURCE',
    help: 'where machine IDs come from (see the sources below)',
    default: 'auto',
  },
  'machine-id': {
    type: 'string',
    env: 'IDS_MACHINE_ID',
    help: 'explicit machine IDs, comma-separated, one per --machines',
  },
  'claim-dir': {
    type: 'string',
    env: 'IDS_CLAIM_DIR',
    help: 'host-claim directory',
    default: '~/.local/state/ids/claims',
  },
  'machine-id-redis': {
    type: 'string',
    env: 'IDS_MACHINE_ID_REDIS_URL',
    help: 'Redis URL of machine IDs',
    default: '--redis / IDS_REDIS_URL',
  },
  'machine-id-ttl': {
    type: 'string',
    env: 'IDS_MACHINE_ID_TTL_SECONDS',
    help: "TTL in seconds of the stores' machine-ID claims, 1-86400",
    default: '10',
  },
  etcd: {
    type: 'string',
    env: 'IDS_ETCD_ENDPOINTS',
    help: 'etcd endpoints, comma-separated: machine IDs held in etcd',
  },
  zookeeper: {
    type: 'string',
    env: 'IDS_ZOOKEEPER_CONNECT',
    help: 'ZooKeeper connect string host:port[,host:port...][/chroot]: machine IDs held there',
  },
  redis: {
    type: 'string',
    env: 'IDS_REDIS_URL',
    help: 'Redis URL for tokens (/tokens), Idempotency-Key on GET /ids, and machine IDs',
  },
  'segment-store': {
    type: 'string',
    env: 'IDS_SEGMENT_STORE',
    help: 'segment IDs by tag from pglite:<dir>, postgres://..., mysql://... or redis://...',
  },
  'segment-tags': {
    type: 'string',
    env: 'IDS_SEGMENT_TAGS',
    help: 'tags checked at start, comma-separated; never created (ids segment create-tag, once)',
  },
  'token-ttl': {
    type: 'string',
    env: 'IDS_TOKEN_TTL_SECONDS',
    help: 'default token TTL in seconds',
    default: String(DEFAULT_TOKEN_TTL_SECONDS),
  },
  'idempotency-lock-ttl': {
    type: 'string',
    env: 'IDS_IDEMPOTENCY_LOCK_TTL_MS',
    help: "lease in ms of an Idempotency-Key's lock while its batch runs, 100-3600000",
    default: String(IDEMPOTENCY_LOCK_TTL_MS),
  },
  'auth-token-file': {
    type: 'string',
    env: 'IDS_AUTH_TOKEN_FILE',
    help: 'file holding the bearer token (or IDS_AUTH_TOKEN)',
  },
  'rate-limit': {
    type: 'string',
    env: 'IDS_RATE_LIMIT',
    help: 'requests/s per client; 0 off',
    default: `off on loopback, ${DEFAULT_PUBLIC_RATE_LIMIT} elsewhere`,
  },
  'max-count': {
    type: 'string',
    env: 'IDS_MAX_COUNT',
    help: `bound on /ids?count=N, 1-${MAX_COUNT_LIMIT}`,
    default: String(DEFAULT_MAX_COUNT),
  },
  'request-timeout': {
    type: 'string',
    env: 'IDS_REQUEST_TIMEOUT_MS',
    help: 'ms for a request to arrive whole, else 408',
    default: String(DEFAULT_REQUEST_TIMEOUT_MS),
  },
  'shutdown-timeout': {
    type: 'string',
    env: 'IDS_SHUTDOWN_TIMEOUT_MS',
    help: 'bound on a graceful shutdown in ms, after the drain',
    default: String(DEFAULT_SHUTDOWN_TIMEOUT_MS),
  },
  drain: {
    type: 'string',
    env: 'IDS_DRAIN_MS',
    help: `ms served after SIGTERM with readiness 503, before closing, 0-${MAX_DRAIN_MS}; SIGINT skips it`,
    default: String(DEFAULT_DRAIN_MS),
  },
  'log-format': {
    type: 'string',
    env: 'IDS_LOG_FORMAT',
    help: 'text or json: one JSON object a line, with time and level',
    default: 'text',
  },
  'log-level': {
    type: 'string',
    env: 'IDS_LOG_LEVEL',
    help: 'the least level written: info, warn or error',
    default: 'info',
  },
  'access-log': {
    type: 'boolean',
    env: 'IDS_ACCESS_LOG',
    help: 'log each request: method, path, status, duration, client (IDS_ACCESS_LOG=1 or true)',
    default: 'off',
  },
} as const satisfies Record<
  string,
  { type: 'string' | 'boolean'; env: string; help: string; default?: string }
>;

/** A flag of `ids-server` as `--help` and the README list it. */
export interface ServerFlag {
  /** `--name`, or `-h, --help`. */
  readonly flag: string;
  /** Its environment variable; empty for none. */
  readonly env: string;
  /** What it does. */
  readonly help: string;
  /** Its default in words; empty for none. */
  readonly default: string;
}

/** Every flag of `ids-server` in the order of `--help`, `--help` and `--version` last. */
export function serverFlags(): ServerFlag[] {
  return [
    ...Object.entries(FLAGS).map(([name, flag]) => ({
      flag: `--${name}`,
      env: flag.env,
      help: flag.help,
      default: 'default' in flag ? flag.default : '',
    })),
    { flag: '-h, --help', env: '', help: 'this text', default: '' },
    { flag: '-v, --version', env: '', help: 'print the version', default: '' },
  ];
}

/** How `ids-server` writes its log lines. */
export type LogFormat = 'text' | 'json';

/** The levels of `ids-server`'s lines, least severe first: `--log-level` writes its own and those after it. */
export const LOG_LEVELS = ['info', 'warn', 'error'] as const;

/** A level of `ids-server`'s lines. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How `ids-server` logs: the format of its lines and the least level it writes. */
export interface LogSettings {
  /** `text` (for a person) or `json` (one object a line). */
  readonly format: LogFormat;
  /** The least level written: `info` writes every line, `warn` leaves info out, `error` warnings too. */
  readonly level: LogLevel;
}

/**
 * The `--help` text of `ids-server` (and `ids serve`, which passes its own name and its
 * command line's wording of the same exit codes).
 */
export function serverHelp(
  command = 'ids-server',
  exitCodes = 'Exit codes: 0 stopped cleanly, 1 failed or cut short, 2 bad flags or settings, or a\npackage they need not installed.',
): string {
  const options = serverFlags().map((flag) => [
    flag.flag,
    flag.env,
    flag.default === '' ? flag.help : `${flag.help} (default ${flag.default})`,
  ]);
  const sources = machineIdSources().map((s) => [s.name, s.summary]);
  return `Usage: ${command} [options]

Serves IDs over HTTP: GET /id, /ids?count=N, /ids/{id}, /layout, /health/live, /health/ready,
/metrics, /openapi.json, the inspector page at / (and /tokens with Redis, /api/segment/... with
a segment store). On SIGTERM: drains (--drain), then stops gracefully; SIGINT skips the drain.

Options (flag, environment variable; a flag wins):
${aligned(options)}

Machine-ID sources (--machine-id-source):
${aligned(sources)}

On a non-loopback HOST a bearer token is required (IDS_AUTH_TOKEN, IDS_AUTH_TOKEN_FILE), unless
IDS_ALLOW_UNAUTHENTICATED=1; the per-client rate limit is then on by default.
${exitCodes}
`;
}

/**
 * Rows of cells as lines indented by two, each column as wide as its widest cell (so they line
 * up), the last cell cut to end within HELP_WIDTH, its further lines starting under it.
 */
function aligned(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const at = 2 + widths.slice(0, -1).reduce((sum, width) => sum + width + 2, 0);
  return rows
    .flatMap((row) => {
      const head = row.slice(0, -1).map((cell, i) => cell.padEnd(widths[i]!));
      return wrapWords(row.at(-1)!, HELP_WIDTH - at).map((text, i) =>
        i === 0 ? `  ${[...head, text].join('  ')}` : `${' '.repeat(at)}${text}`,
      );
    })
    .join('\n');
}

function integer(text: string, what: string): number {
  if (!/^[0-9]{1,10}$/.test(text)) {
    throw new ServerConfigError(`${what}: expected a whole number, received ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** What the command line asked for. */
export type ParsedCommandLine =
  | {
      /** `--help` was given: print `serverHelp()` and start nothing. */
      help: true;
      /** `--help` wins over `--version`. */
      version?: false;
    }
  | {
      /** No `--help`. */
      help: false;
      /** `--version` was given: print the version and start nothing. */
      version: true;
    }
  | {
      /** No `--help`. */
      help: false;
      /** No `--version`. */
      version?: false;
      /** The options the flags and environment give. */
      options: IdServerOptions;
    };

/**
 * Reads `ids-server`'s flags and environment into options (checked further by
 * `checkServerOptions` when the server starts).
 * @throws ServerConfigError for an unknown flag, a value that is not a number where one is
 * expected, or an unreadable token file.
 */
export function parseServerArgs(args: readonly string[], env: Env = process.env): ParsedCommandLine {
  let values: Record<string, string | boolean | undefined>;
  const flags: Record<string, OptionSpec> = {
    ...Object.fromEntries(Object.entries(FLAGS).map(([name, flag]) => [name, { type: flag.type }])),
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  };
  try {
    // A negative number reaches the flag's own check (`--drain -1`: --drain: expected a whole
    // number), and parseArgs' errors read as `ids`'s do (engine's optionErrorText).
    ({ values } = parseArgs({
      args: joinNegativeValues(args, flags),
      options: flags,
      allowPositionals: false,
      strict: true,
    }));
  } catch (error) {
    throw new ServerConfigError(optionErrorText(error, flags));
  }
  if (values.help) return { help: true };
  if (values.version) return { help: false, version: true };
  const get = (name: keyof typeof FLAGS): { value: string; what: string } | undefined => {
    const flag = values[name];
    if (typeof flag === 'string') return { value: flag, what: `--${name}` };
    const variable = env[FLAGS[name].env];
    if (variable !== undefined && variable !== '') return { value: variable, what: FLAGS[name].env };
    return undefined;
  };
  const num = (name: keyof typeof FLAGS) => {
    const got = get(name);
    return got === undefined ? undefined : integer(got.value.trim(), got.what);
  };
  // A boolean flag given, else its variable as 1/true or 0/false.
  const on = (name: keyof typeof FLAGS): boolean | undefined => {
    if (values[name] === true) return true;
    const variable = env[FLAGS[name].env]?.trim();
    if (variable === undefined || variable === '') return undefined;
    if (variable === '1' || variable === 'true') return true;
    if (variable === '0' || variable === 'false') return false;
    throw new ServerConfigError(
      `${FLAGS[name].env}: expected 1, true, 0 or false, received ${JSON.stringify(variable)}`,
    );
  };
  logFormatOf(get('log-format'));
  logLevelOf(get('log-level'));
  const ids = get('machine-id');
  const machineIds = ids?.value.trim() ? parseMachineIds(ids.value, ids.what, { count: 'any' }) : undefined;
  let authToken = env.IDS_AUTH_TOKEN || undefined;
  const tokenFile = get('auth-token-file');
  if (tokenFile) {
    try {
      authToken = readFileSync(tokenFile.value, 'utf8').trim();
    } catch (error) {
      throw new ServerConfigError(
        `${tokenFile.what}: expected a readable file holding the token, received ${JSON.stringify(tokenFile.value)} (${(error as Error).message})`,
      );
    }
  }
  const options: Record<string, unknown> = {
    host: get('host')?.value,
    port: num('port'),
    layout: get('layout')?.value,
    machines: num('machines'),
    machineIdSource: get('machine-id-source')?.value,
    machineIds,
    claimDir: get('claim-dir')?.value,
    etcdEndpoints: splitList(get('etcd')?.value),
    redisUrl: get('redis')?.value,
    machineIdRedisUrl: get('machine-id-redis')?.value,
    zookeeperConnect: get('zookeeper')?.value,
    machineIdTtlSeconds: num('machine-id-ttl'),
    segmentStore: get('segment-store')?.value,
    segmentTags: splitList(get('segment-tags')?.value),
    tokenTtlSeconds: num('token-ttl'),
    idempotencyLockTtlMs: num('idempotency-lock-ttl'),
    authToken,
    allowUnauthenticated: env.IDS_ALLOW_UNAUTHENTICATED === '1' || env.IDS_ALLOW_UNAUTHENTICATED === 'true',
    rateLimit: num('rate-limit'),
    maxCount: num('max-count'),
    requestTimeoutMs: num('request-timeout'),
    shutdownTimeoutMs: num('shutdown-timeout'),
    drainMs: num('drain'),
    accessLog: on('access-log'),
    env,
  };
  for (const key of Object.keys(options)) if (options[key] === undefined) delete options[key];
  return { help: false, options: options as IdServerOptions };
}

function logFormatOf(got: { value: string; what: string } | undefined): LogFormat {
  const value = got?.value.trim() ?? 'text';
  if (value === 'text' || value === 'json') return value;
  throw new ServerConfigError(`${got?.what}: expected text or json, received ${JSON.stringify(value)}`);
}

function logLevelOf(got: { value: string; what: string } | undefined): LogLevel {
  const value = got?.value.trim() ?? 'info';
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  throw new ServerConfigError(
    `${got?.what}: expected ${LOG_LEVELS.slice(0, -1).join(', ')} or ${LOG_LEVELS.at(-1)}, received ${JSON.stringify(value)}`,
  );
}

/**
 * How the command line asks to log: the format (`--log-format`, else IDS_LOG_FORMAT, else text)
 * and the least level written (`--log-level`, else IDS_LOG_LEVEL, else info), read on their own
 * so that even a command line `parseServerArgs` rejects is answered in that format. A format or
 * level that cannot be read leaves the default in its place here; `parseServerArgs` refuses it.
 */
export function readLogSettings(args: readonly string[], env: Env = process.env): LogSettings {
  const { values } = parseArgs({
    args: joinNegativeValues(args, { 'log-format': { type: 'string' }, 'log-level': { type: 'string' } }),
    options: { 'log-format': { type: 'string' }, 'log-level': { type: 'string' } },
    strict: false,
    allowPositionals: true,
  });
  const read = <T>(name: 'log-format' | 'log-level', parse: (got: { value: string; what: string }) => T) => {
    const flag = values[name];
    const variable = env[FLAGS[name].env];
    const got =
      typeof flag === 'string'
        ? { value: flag, what: `--${name}` }
        : variable
          ? { value: variable, what: FLAGS[name].env }
          : undefined;
    try {
      return got === undefined ? undefined : parse(got);
    } catch {
      return undefined;
    }
  };
  return {
    format: read('log-format', logFormatOf) ?? 'text',
    level: read('log-level', logLevelOf) ?? 'info',
  };
}
