// What the server reports as it runs, besides errors: the two ends of a claim's loss, the steps
// of a shutdown, and (with the access log on) each request. `ids-server` writes them as log lines;
// an embedding application passes `onEvent` and does what it likes with them.

/** A generator's claim was found lost: it issues nothing until it claims again. */
export interface ClaimLostEvent {
  /** What happened: `claim-lost`. */
  readonly kind: 'claim-lost';
  /** The generator's slot. */
  readonly slot: number;
  /** The machine ID whose claim was lost. */
  readonly machineId: number;
  /** Why, as the claim said (its abort reason, usually a typed error). */
  readonly reason: unknown;
}

/** A generator whose claim was lost holds one again and issues again. */
export interface ClaimRecoveredEvent {
  /** What happened: `claim-recovered`. */
  readonly kind: 'claim-recovered';
  /** The generator's slot. */
  readonly slot: number;
  /** The machine ID it issues under now. */
  readonly machineId: number;
  /** The machine ID whose claim was lost (the same one when the claim renewed itself). */
  readonly previousMachineId: number;
}

/** A shutdown began with a drain: readiness answers 503, requests are still served. */
export interface DrainingEvent {
  /** What happened: `draining`. */
  readonly kind: 'draining';
  /** How long requests are still served, in ms. */
  readonly drainMs: number;
}

/** The drain is over (or there was none): no new connections; requests in flight finish. */
export interface ClosingEvent {
  /** What happened: `closing`. */
  readonly kind: 'closing';
}

/** One request answered (only with the access log on). */
export interface RequestEvent {
  /** What happened: `request`. */
  readonly kind: 'request';
  /** The method. */
  readonly method: string;
  /** The request target as sent (path and query), cut to 200 characters. */
  readonly url: string;
  /** The route's path pattern (`/ids/{id}`), or `unmatched`. */
  readonly route: string;
  /** The status answered. */
  readonly status: number;
  /** Time from the request's arrival to its answer, in ms. */
  readonly durationMs: number;
  /** The client's address. */
  readonly remoteAddress: string | undefined;
}

/** Everything `onEvent` receives. */
export type ServerEvent = ClaimLostEvent | ClaimRecoveredEvent | DrainingEvent | ClosingEvent | RequestEvent;
