import { errorText } from '@ids/engine/internal';
import { LeaseLostError, LeaseStoreRefusedError, StoreUnavailableError } from '@ids/machine-lease/errors';
import { bounded, StoreTimeout } from '@ids/machine-lease/internal';
import {
  castGrpcError,
  Etcd3,
  EtcdLeaseInvalidError,
  type IDuplexStream,
  type ILeaseKeepAliveRequest,
  type ILeaseKeepAliveResponse,
  type IOptions,
  isRecoverableError,
} from 'etcd3';

/** What Node's TLS and gRPC say when a certificate does not verify (codes and messages). */
const TLS_FAILURE =
  /certificate|self[- ]signed|CERT_|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS|ERR_SSL|SSL routines|wrong version number/i;

function isTlsFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = String((error as { code?: unknown }).code ?? '');
  const details = String((error as { details?: unknown }).details ?? '');
  return TLS_FAILURE.test(`${error.message} ${details} ${code}`);
}

import type { CheckedEtcdOptions, EtcdOptions } from './options.js';

/** etcd3's BrokenCircuitError (from cockatiel) carries this flag; both it and gRPC's UNAVAILABLE mean "etcd is down". */
function isBrokenCircuit(error: unknown): boolean {
  return (error as { isBrokenCircuitError?: unknown } | null)?.isBrokenCircuitError === true;
}

/**
 * gRPC keepalive ping interval on our own clients: etcd refuses pings more often than every 5 s
 * (`--grpc-keepalive-min-time`), answering with GOAWAY; 6 s leaves room for timer jitter.
 */
const KEEPALIVE_PING_MS = 6000;

/** Our own stand-in for "no answer" from a stream that closed early (a call that ran out of time is StoreTimeout). */
class NoAnswer extends Error {}

/**
 * One etcd client plus the rules for talking to it: every call is bounded by `timeoutMs` (a
 * gRPC deadline, and a timer in case the library itself stalls), and its failures are sorted
 * into StoreUnavailableError (waiting may help) and LeaseStoreRefusedError (it will not). The
 * same connection serves machine IDs and locks: `feature` says which, in its StoreUnavailableError.
 */
export class Connection {
  /** The etcd3 client: made here from the options, or the user's own (`client`). */
  readonly client: Etcd3;
  readonly #owned: boolean;
  readonly #where: string;
  /** The longest any call may take, in ms (`timeoutMs` of the options). */
  readonly timeoutMs: number;
  readonly #feature: StoreUnavailableError['feature'];
  #closed = false;

  constructor(
    options: EtcdOptions,
    settings: Pick<CheckedEtcdOptions, 'hosts' | 'timeoutMs'>,
    feature: StoreUnavailableError['feature'],
  ) {
    this.timeoutMs = settings.timeoutMs;
    this.#feature = feature;
    if (options.client) {
      this.client = options.client;
      this.#owned = false;
      this.#where = 'the etcd client given';
    } else {
      const clientOptions: IOptions = {
        ...options.etcdOptions,
        // gRPC keepalive pings: a connection that stops answering (a partition) is torn down
        // within about keepalive time + timeout, so that a stream etcd3 cannot cancel (a watch
        // whose cancel got no reply) does not keep the process alive after close().
        grpcOptions: {
          'grpc.keepalive_time_ms': KEEPALIVE_PING_MS,
          'grpc.keepalive_timeout_ms': Math.max(1, Math.min(settings.timeoutMs, KEEPALIVE_PING_MS)),
          ...options.etcdOptions?.grpcOptions,
        },
        hosts: settings.hosts,
        dialTimeout: options.etcdOptions?.dialTimeout ?? settings.timeoutMs,
      };
      if (options.credentials) clientOptions.credentials = options.credentials;
      if (options.auth) clientOptions.auth = options.auth;
      this.client = new Etcd3(clientOptions);
      this.#owned = true;
      this.#where = `etcd at ${settings.hosts.join(', ')}`;
    }
  }

  /**
   * Runs `fn` with a gRPC deadline, within `timeoutMs` (or less when `budgetMs` says so), and
   * turns its failure into one of our errors naming `what` was being done.
   */
  async call<T>(
    what: string,
    fn: (options: { deadline: Date }) => Promise<T>,
    budgetMs = this.timeoutMs,
  ): Promise<T> {
    const ms = Math.max(1, Math.min(this.timeoutMs, budgetMs));
    try {
      return await bounded(ms, () => fn({ deadline: new Date(Date.now() + ms) }));
    } catch (error) {
      throw this.translate(what, error, ms);
    }
  }

  /**
   * The one rule of this store: a failure of a call that took at most `ms`, as
   * StoreUnavailableError (no answer, nothing listening, the circuit breaker open: waiting
   * may help), LeaseLostError (the lease is gone) or LeaseStoreRefusedError (TLS, credentials,
   * permissions, anything else etcd answered: waiting will not help).
   */
  translate(what: string, raw: unknown, ms: number): Error {
    if (raw instanceof LeaseLostError || raw instanceof StoreUnavailableError) return raw;
    if (raw instanceof StoreTimeout) {
      return new StoreUnavailableError(
        'etcd',
        this.#feature,
        `${what}: ${this.#where} did not answer within ${ms} ms (timeoutMs)`,
      );
    }
    // Unary calls come back typed; errors on streams come as gRPC's plain Error with a status code.
    const error =
      raw instanceof Error && !(raw instanceof NoAnswer || raw instanceof StoreTimeout)
        ? castGrpcError(raw)
        : raw;
    if (error instanceof EtcdLeaseInvalidError) {
      return new LeaseLostError(
        'etcd',
        'lease-expired',
        `${what}: etcd no longer knows the lease (it expired or was revoked)`,
        { cause: error },
      );
    }
    const message = errorText(error);
    // gRPC reports a certificate that does not verify as UNAVAILABLE ("no connection
    // established"), which would read as "etcd is down, wait": it is a setup error instead.
    if (isTlsFailure(error) || isTlsFailure(raw)) {
      return new LeaseStoreRefusedError(
        'etcd',
        `${what}: the TLS connection to ${this.#where} failed: ${message}`,
        {
          cause: error,
        },
      );
    }
    if (
      error instanceof NoAnswer ||
      error instanceof StoreTimeout ||
      isBrokenCircuit(error) ||
      (error instanceof Error && isRecoverableError(error))
    ) {
      return new StoreUnavailableError(
        'etcd',
        this.#feature,
        `${what}: ${this.#where} is unavailable: ${message}`,
        {
          cause: error,
        },
      );
    }
    return new LeaseStoreRefusedError('etcd', `${what}: ${this.#where} refused: ${message}`, {
      cause: error,
    });
  }

  /** Grants a lease; returns its ID (a decimal string, as etcd3 gives int64) and granted TTL in ms. */
  async grant(ttlSeconds: number, budgetMs?: number): Promise<{ id: string; ttlMs: number }> {
    const response = await this.call(
      'granting a lease',
      (options) => this.client.leaseClient.leaseGrant({ TTL: ttlSeconds, ID: 0 }, options),
      budgetMs,
    );
    if (response.error) {
      throw new LeaseStoreRefusedError('etcd', `granting a lease: etcd refused: ${response.error}`);
    }
    return { id: response.ID, ttlMs: Number(response.TTL) * 1000 };
  }

  /**
   * One keepalive on a stream of its own (etcd3's streaming loop only notices a dead lease a
   * TTL late). Resolves when etcd confirms the lease alive; LeaseLostError when etcd says it
   * is gone (TTL 0).
   */
  keepalive(leaseId: string, budgetMs: number): Promise<void> {
    let stream: IDuplexStream<ILeaseKeepAliveRequest, ILeaseKeepAliveResponse> | undefined;
    let done = false;
    let failed = false;
    // Half-closing first makes the stream unwritable, so etcd3 does not count the cancel that
    // may follow as a host failure (which would trip its circuit breaker).
    const finish = () => {
      stream?.end();
      if (failed) stream?.cancel();
    };
    return this.call(
      'a lease keepalive',
      async (options) => {
        const opened = await this.client.leaseClient.leaseKeepAlive(options);
        stream = opened;
        opened.on('error', () => undefined);
        if (done) {
          finish();
          throw new NoAnswer('the keepalive stream opened after its time was up');
        }
        const reply = await new Promise<ILeaseKeepAliveResponse>((resolve, reject) => {
          opened.on('data', resolve);
          opened.on('error', reject);
          opened.on('end', () => reject(new NoAnswer('the keepalive stream ended without a reply')));
          opened.write({ ID: leaseId });
        });
        if (Number(reply.TTL) <= 0) {
          throw new LeaseLostError(
            'etcd',
            'lease-expired',
            `etcd says lease ${leaseId} no longer exists (it expired or was revoked)`,
          );
        }
      },
      budgetMs,
    ).then(
      () => {
        done = true;
        finish();
      },
      (error: unknown) => {
        done = true;
        failed = true;
        finish();
        throw error;
      },
    );
  }

  /** Revokes a lease, which deletes the keys bound to it at once. A lease already gone is not an error. */
  async revoke(leaseId: string): Promise<void> {
    try {
      await this.call('revoking the lease', (options) =>
        this.client.leaseClient.leaseRevoke({ ID: leaseId }, options),
      );
    } catch (error) {
      if (error instanceof LeaseLostError) return;
      throw error;
    }
  }

  /** Closes the client if we made it. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#owned) this.client.close();
  }
}
