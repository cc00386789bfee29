// The Prometheus metrics, in a registry of the server's own (not prom-client's global one), so
// that two servers in one process (tests, an embedding app) do not mix their counts.
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client';

/** The server's metrics; the pool and the HTTP layer update them. */
export interface ServerMetrics {
  /** The registry `/metrics` serves. */
  readonly registry: Registry;
  /**
   * IDs issued, by generator slot: plain counts the pool adds to, which `ids_issued_total` reads
   * when scraped (a prom-client inc per request checks and hashes its labels every time).
   */
  readonly issued: IssuedCounts;
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
  readonly httpSeconds: RequestLatency;
}

/** IDs issued per slot, read into `ids_issued_total` at each scrape. */
export interface IssuedCounts {
  /** Adds `count` IDs issued by `slot`. */
  add(slot: number, count: number): void;
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
    issued: issuedCounts(registers),
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
    httpSeconds: new RequestLatency(registry),
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
  metrics.issued.add(Number(slot), 0);
  for (const counter of [metrics.waits, metrics.clockBackwards, metrics.fences, metrics.renewals]) {
    counter.inc({ slot }, 0);
  }
  metrics.waitSeconds.zero({ slot });
}

/** The issued counts, and the `ids_issued_total` counter in `registers` that reads them when scraped. */
function issuedCounts(registers: Registry[]): IssuedCounts {
  const counts: number[] = [];
  const seen: number[] = [];
  new Counter({
    name: 'ids_issued_total',
    help: 'IDs issued',
    labelNames: ['slot'],
    registers,
    collect() {
      // Added as the difference since the last scrape, so the counter holds the exact count.
      for (let slot = 0; slot < counts.length; slot++) {
        const now = counts[slot] ?? 0;
        this.inc({ slot: String(slot) }, now - (seen[slot] ?? 0));
        seen[slot] = now;
      }
    },
  });
  return {
    add(slot, count) {
      counts[slot] = (counts[slot] ?? 0) + count;
    },
  };
}

/** Upper bounds of the latency buckets, in seconds. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 1];

/** One series of the latency histogram: its counts per bucket (not cumulative), sum and count. */
export class LatencySeries {
  readonly buckets = new Array<number>(LATENCY_BUCKETS.length).fill(0);
  sum = 0;
  count = 0;
  constructor(readonly labels: Readonly<Record<'route' | 'method' | 'status', string>>) {}

  /** Counts one request that took `seconds`. */
  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= (LATENCY_BUCKETS[i] as number)) {
        this.buckets[i] = (this.buckets[i] as number) + 1;
        return;
      }
    }
  }
}

/**
 * `ids_http_request_duration_seconds`: a histogram by route, method and status, counted in plain
 * numbers per request and handed to prom-client only when scraped. prom-client's own histogram
 * checks and hashes the labels of every observation, a cost per request for what only a scrape
 * reads. Registered as a metric whose `get()` answers what prom-client's histogram answers, so
 * the registry writes it the same way.
 */
export class RequestLatency {
  readonly name = 'ids_http_request_duration_seconds';
  readonly help = 'HTTP request latency by route, method and status';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  // Keyed by each part, so no key string is built per request. Bounded: the routes are fixed,
  // and node:http passes only the methods it knows.
  readonly #series = new Map<string, Map<string, Map<number, LatencySeries>>>();

  constructor(registry: Registry) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of a route, method and status, made on first use. */
  series(route: string, method: string, status: number): LatencySeries {
    let byMethod = this.#series.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.#series.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = new LatencySeries({ route, method, status: String(status) });
      byStatus.set(status, series);
    }
    return series;
  }

  /** The values as prom-client's histogram gives them: cumulative buckets, then sum and count. */
  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const byMethod of this.#series.values()) {
      for (const byStatus of byMethod.values()) {
        for (const series of byStatus.values()) {
          let cumulative = 0;
          LATENCY_BUCKETS.forEach((le, i) => {
            cumulative += series.buckets[i] as number;
            values.push({
              labels: { le, ...series.labels },
              value: cumulative,
              metricName: `${this.name}_bucket`,
            });
          });
          values.push(
            {
              labels: { le: '+Inf', ...series.labels },
              value: series.count,
              metricName: `${this.name}_bucket`,
            },
            { labels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
            { labels: series.labels, value: series.count, metricName: `${this.name}_count` },
          );
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Forgets every series (prom-client's `registry.resetMetrics()`). */
  reset(): void {
    this.#series.clear();
  }
}
