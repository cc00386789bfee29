// The Prometheus metrics, in a registry of the server's own (not prom-client's global one), so
// that two servers in one process (tests, an embedding app) do not mix their counts.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The server's metrics; the pool and the HTTP layer update them. */
export interface ServerMetrics {
  /** The registry `/metrics` serves. */
  readonly registry: Registry;
  /** IDs issued, by generator slot. */
  readonly issued: Counter<'slot'>;
  /** Waits for the next tick (or for the clock to come back), by slot. */
  readonly waits: Counter<'slot'>;
  /** How long those waits took, in seconds. */
  readonly waitSeconds: Histogram<'slot'>;
  /** Clock-backwards events: waits for a clock behind the last tick used, and refusals past the bound. */
  readonly clockBackwards: Counter<'slot'>;
  /** 1 while the slot's claim is held and not fenced, else 0. */
  readonly claimHeld: Gauge<'slot'>;
  /** The machine ID each slot issues under now. */
  readonly machineId: Gauge<'slot'>;
  /** Fences: claims found lost, by slot. */
  readonly fences: Counter<'slot'>;
  /** Claims taken again after a fence, by slot. */
  readonly renewals: Counter<'slot'>;
  /** 1 while /health/ready answers 200. */
  readonly ready: Gauge;
  /**
   * Requests received and not yet answered: a plain count the HTTP layer keeps, which the
   * `ids_http_requests_in_flight` gauge reads when scraped (a prom-client inc/dec per request
   * checks and hashes labels twice per request for a value only a scrape looks at).
   */
  readonly inFlight: {
    /** Requests being answered now; read into `ids_http_requests_in_flight` at each scrape. */
    count: number;
  };
  /** HTTP request latency, by route pattern, method and status. */
  readonly httpSeconds: Histogram<'route' | 'method' | 'status'>;
}

/**
 * prom-client's default gauges named `_total`, which Prometheus reserves for counters (promtool
 * rejects them). Each is the sum of a gauge by `type` that stays: `nodejs_active_handles`, ...
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** A fresh registry with the server's metrics and Node's process metrics. */
export function createMetrics(): ServerMetrics {
  const registry = new Registry();
  const registers = [registry];
  const slot = ['slot'] as const;
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  return {
    registry,
    issued: new Counter({ name: 'ids_issued_total', help: 'IDs issued', labelNames: slot, registers }),
    waits: new Counter({
      name: 'ids_generator_waits_total',
      help: 'Waits of a generator for its next tick or for the clock to come back',
      labelNames: slot,
      registers,
    }),
    waitSeconds: new Histogram({
      name: 'ids_generator_wait_seconds',
      help: 'Duration of those waits',
      labelNames: slot,
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 2],
      registers,
    }),
    clockBackwards: new Counter({
      name: 'ids_clock_backwards_total',
      help: 'Times the clock was found behind the last tick used (waited for, or refused past maxClockBackwardMs)',
      labelNames: slot,
      registers,
    }),
    claimHeld: new Gauge({
      name: 'ids_claim_held',
      help: '1 while the machine-ID claim of a slot is held and not fenced',
      labelNames: slot,
      registers,
    }),
    machineId: new Gauge({
      name: 'ids_machine_id',
      help: 'The machine ID a slot issues under',
      labelNames: slot,
      registers,
    }),
    fences: new Counter({
      name: 'ids_claim_fences_total',
      help: 'Machine-ID claims found lost (the slot stops issuing until it claims again)',
      labelNames: slot,
      registers,
    }),
    renewals: new Counter({
      name: 'ids_claim_renewals_total',
      help: 'Machine-ID claims taken again after a fence',
      labelNames: slot,
      registers,
    }),
    ready: new Gauge({ name: 'ids_ready', help: '1 while /health/ready answers 200', registers }),
    inFlight: inFlightCount(registers),
    httpSeconds: new Histogram({
      name: 'ids_http_request_duration_seconds',
      help: 'HTTP request latency by route, method and status',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
  };
}

/** The in-flight count, and its gauge in `registers` that reads it when scraped. */
function inFlightCount(registers: Registry[]): { count: number } {
  const inFlight = { count: 0 };
  new Gauge({
    name: 'ids_http_requests_in_flight',
    help: 'Requests received and not yet answered',
    registers,
    collect() {
      this.set(inFlight.count);
    },
  });
  return inFlight;
}

/**
 * Creates every series of a slot at 0, so that a rate or an alert on it can be written before
 * its first event (a series that does not exist yet is not a zero to PromQL).
 */
export function zeroSlot(metrics: ServerMetrics, slot: string): void {
  for (const counter of [
    metrics.issued,
    metrics.waits,
    metrics.clockBackwards,
    metrics.fences,
    metrics.renewals,
  ]) {
    counter.inc({ slot }, 0);
  }
  metrics.waitSeconds.zero({ slot });
}
