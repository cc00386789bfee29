import { hostname } from 'node:os';

/** Who holds a claim in a store: enough for a person to find the process. */
export interface Owner {
  /** The holder's host name (os.hostname). */
  readonly host: string;
  /** The holder's process ID on that host. */
  readonly pid: number;
  /** When the process started (ISO 8601). */
  readonly started: string;
}

/** This process, as a claim's value names it. */
export function currentOwner(): Owner {
  return {
    host: hostname(),
    pid: process.pid,
    started: new Date(Date.now() - process.uptime() * 1000).toISOString(),
  };
}

/**
 * A claim's value read back: the JSON object with a holder's identity (and whatever else the
 * store put beside it, such as Redis's token), or undefined for anything a holder would not
 * have written. Each store turns undefined into its own corrupt-claim error.
 */
export function readOwner(raw: string): (Owner & Readonly<Record<string, unknown>>) | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const o = parsed as Partial<Owner> | null;
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o.host !== 'string' ||
    !Number.isInteger(o.pid) ||
    typeof o.started !== 'string'
  ) {
    return undefined;
  }
  return o as Owner & Readonly<Record<string, unknown>>;
}
