import { InvalidArgumentError } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { type CheckedLeaseOptions, checkLeaseOptions, checkOptionsObject } from '@ids/machine-lease/internal';
import type { Etcd3, IOptions } from 'etcd3';

/** Where claims live when no prefix is given. */
export const DEFAULT_PREFIX = '/ids/machine-id';
/** The local default etcd, as etcdctl assumes. */
export const DEFAULT_ENDPOINT = 'http://127.0.0.1:2379';

/** How to reach etcd and how to hold a lease there; shared by etcdMachineId and etcdCheckMachineId. */
export interface EtcdOptions {
  /**
   * etcd client URLs (`http://host:port` or `https://host:port`, all of one scheme), as an array
   * or a comma-separated string. Default: the `ETCD_ENDPOINTS` environment variable, else
   * `http://127.0.0.1:2379`. A malformed URL is InvalidArgumentError; an unreachable one gives
   * StoreUnavailableError within `timeoutMs`.
   */
  readonly endpoints?: string | readonly string[];
  /** TLS material, passed to etcd3 as is (`rootCertificate`, `privateKey`, `certChain`). Default: none. */
  readonly credentials?: IOptions['credentials'];
  /** User name and password, passed to etcd3 as is. Default: none. */
  readonly auth?: IOptions['auth'];
  /** Any other etcd3 client options (`grpcOptions`, `faultHandling`, ...). Default: etcd3's. */
  readonly etcdOptions?: Omit<IOptions, 'hosts' | 'credentials' | 'auth'>;
  /**
   * An etcd3 client to use instead of making one from the options above (which must then be
   * absent). It is not closed on release. Default: a client of our own, closed on release.
   */
  readonly client?: Etcd3;
  /**
   * The key prefix: an absolute path without a trailing slash. Claims are `<prefix>/<id>`, the
   * recorded times `<prefix>/time/<id>`. Default `/ids/machine-id`.
   */
  readonly prefix?: string;
  /** Lease TTL in whole seconds, 1 to 86,400. Default 10. etcd may raise a TTL below its own floor. */
  readonly ttlSeconds?: number;
  /**
   * How long before the server could expire the lease the holder stops trusting it, in ms:
   * 0 or more and under the TTL. Default: a fifth of the TTL (2,000 ms for the default 10 s).
   */
  readonly fenceMarginMs?: number;
  /**
   * Time between keepalives, in ms: above 0 and under TTL minus the margin. Default: a third of
   * TTL minus the margin, so two keepalives may fail before the deadline.
   */
  readonly keepaliveIntervalMs?: number;
  /**
   * The longest any exchange with etcd may take (connecting, claiming, a keepalive, a record), in
   * ms, above 0. Default 3,000. Past it the call fails with StoreUnavailableError.
   */
  readonly timeoutMs?: number;
  /**
   * The width of the machine field this fleet uses, 0 to 30. Default: whatever the generator
   * says. When given, a generator with another width is refused with LeaseBitsMismatchError.
   */
  readonly bits?: number;
}

export interface CheckedEtcdOptions extends CheckedLeaseOptions {
  readonly hosts: string[];
  readonly prefix: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** `http(s)://host:port` with nothing after the port. */
function parseEndpoint(raw: string, option: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new InvalidArgumentError(`expected URLs like http://127.0.0.1:2379, received ${received(raw)}`, {
      option,
    });
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.hostname === '' ||
    url.port === '' ||
    (url.pathname !== '/' && url.pathname !== '') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new InvalidArgumentError(
      `expected http://host:port or https://host:port (with the port; no path, query, fragment or credentials: pass those as auth), received ${received(raw)}`,
      { option },
    );
  }
  return url;
}

/**
 * The `endpoints` option (or ETCD_ENDPOINTS when it is undefined) as `http(s)://host:port` URLs.
 * @throws InvalidArgumentError for a URL that is not http(s)://host:port, or a mix of http and https.
 */
export function parseEndpoints(value: unknown, env: NodeJS.ProcessEnv = process.env): string[] {
  let option = 'endpoints';
  let list: unknown[];
  if (value === undefined) {
    const fromEnv = env.ETCD_ENDPOINTS;
    if (fromEnv === undefined || fromEnv.trim() === '') return [DEFAULT_ENDPOINT];
    option = 'ETCD_ENDPOINTS';
    list = fromEnv.split(',');
  } else if (typeof value === 'string') {
    list = value.split(',');
  } else if (Array.isArray(value)) {
    list = value;
  } else {
    throw new InvalidArgumentError(`expected a URL string or an array of them, received ${received(value)}`, {
      option,
    });
  }
  if (list.length === 0)
    throw new InvalidArgumentError('expected at least one URL, received none', { option });
  const urls = list.map((raw) => {
    if (typeof raw !== 'string') {
      throw new InvalidArgumentError(`expected URL strings, received ${received(raw)} in the list`, {
        option,
      });
    }
    return parseEndpoint(raw, option);
  });
  if (new Set(urls.map((u) => u.protocol)).size > 1) {
    throw new InvalidArgumentError(`expected all http or all https, received ${list.join(', ')}`, { option });
  }
  return urls.map((u) => `${u.protocol}//${u.host}`);
}

// Printable ASCII without space, so keys read the same in etcdctl and in logs.
const SEGMENT = /^[\x21-\x2e\x30-\x7e]+$/;

export function parsePrefix(value: unknown): string {
  if (value === undefined) return DEFAULT_PREFIX;
  const expected =
    'expected an absolute key path like /ids/machine-id (no trailing slash, no empty or . segments, printable ASCII)';
  if (typeof value !== 'string' || value === '' || !value.startsWith('/') || value.length > 512) {
    throw new InvalidArgumentError(`${expected}, received ${received(value)}`, { option: 'prefix' });
  }
  const segments = value.slice(1).split('/');
  if (segments.some((s) => !SEGMENT.test(s) || s === '.' || s === '..')) {
    throw new InvalidArgumentError(`${expected}, received ${received(value)}`, { option: 'prefix' });
  }
  return value;
}

/** Validates everything but the client, in the order the options are documented. */
export function checkEtcdOptions(options: unknown): CheckedEtcdOptions {
  const o = checkOptionsObject(options as EtcdOptions | undefined);
  const ownClient = o.endpoints !== undefined || o.credentials !== undefined || o.auth !== undefined;
  if (o.client !== undefined) {
    if (!isRecord(o.client) || typeof (o.client as { if?: unknown }).if !== 'function') {
      throw new InvalidArgumentError(`expected an etcd3 Etcd3 instance, received ${received(o.client)}`, {
        option: 'client',
      });
    }
    if (ownClient || o.etcdOptions !== undefined) {
      throw new InvalidArgumentError(
        'expected either a client or the options to make one (endpoints, credentials, auth, etcdOptions), received both',
        { option: 'client' },
      );
    }
  }
  const hosts = o.client === undefined ? parseEndpoints(o.endpoints) : [];
  const prefix = parsePrefix(o.prefix);
  return { hosts, prefix, ...checkLeaseOptions(o) };
}
