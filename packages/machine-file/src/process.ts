import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * What a claim needs to know about processes, as a seam: tests pass a table with dead or
 * reused pids. The default reads Linux's /proc; elsewhere `startOf` and `bootId` answer
 * undefined and a claim is judged by its pid alone.
 */
export interface ProcessTable {
  /** This process's pid. */
  readonly pid: number;
  /** True when a process with this pid exists (one owned by another user counts). */
  exists(pid: number): boolean;
  /** A token that differs between two processes that had the same pid (their start time), or undefined when it cannot be told. */
  startOf(pid: number): string | undefined;
  /** An ID of the current boot of the host (Linux boot_id), or undefined. */
  bootId(): string | undefined;
  /** The host name, so that claims of another host sharing the directory are never taken. */
  hostname(): string;
  /**
   * This process's PID namespace (the inode of Linux's /proc/self/ns/pid), or undefined. A pid
   * means nothing in another namespace, so a claim of another namespace is judged by its record
   * instead (see FOREIGN_CLAIM_GRACE_MS). Tables without it judge every claim by pid.
   */
  pidNamespace?(): string | undefined;
}

/**
 * How long after its record lapses a claim written in another PID namespace (another container
 * sharing the directory and the host name) counts as abandoned. Its holder renews the record
 * ahead of the clock while it runs and issues no ID past it, so a claim whose record lapsed this
 * long ago has a holder that is gone or stopped; a stopped holder that resumes finds its renewal
 * late by more than this, and fences itself. One kernel gives every namespace the same wall clock.
 */
export const FOREIGN_CLAIM_GRACE_MS = 10_000;

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot. The command name
 * (field 2) is in parentheses and may itself contain spaces and parentheses, so fields are
 * counted from the last ')'.
 */
export function startFromStat(stat: string): string | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

let boot: string | undefined | null = null;
let pidns: string | undefined | null = null;

/** The inode number in `pid:[4026531836]`, the target of /proc/self/ns/pid. */
function readPidNamespace(): string | undefined {
  try {
    return /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
  } catch {
    return undefined;
  }
}

/** The table of the running system. */
export const systemProcesses: ProcessTable = Object.freeze({
  pid: process.pid,
  exists(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      // EPERM: the process exists but belongs to someone else.
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  startOf(pid: number): string | undefined {
    const stat = readText(`/proc/${pid}/stat`);
    return stat === undefined ? undefined : startFromStat(stat);
  },
  bootId(): string | undefined {
    if (boot === null) boot = readText('/proc/sys/kernel/random/boot_id')?.trim() || undefined;
    return boot;
  },
  hostname: () => hostname(),
  pidNamespace(): string | undefined {
    if (pidns === null) pidns = readPidNamespace();
    return pidns;
  },
});

/** Who holds (or held) a claim: enough to tell, later, whether that process still runs. */
export interface Identity {
  /** Its pid: a positive integer. */
  readonly pid: number;
  /** Its start time (`ProcessTable.startOf`), so a reused pid is told apart; null where unknown. */
  readonly start: string | null;
  /** The host it ran on: a claim of another host is never judged, nor taken over. */
  readonly host: string;
  /** The boot it ran in (`ProcessTable.bootId`): every process of an earlier boot is gone; null where unknown. */
  readonly boot: string | null;
  /**
   * Its PID namespace (`ProcessTable.pidNamespace`); null or absent where unknown (and in files
   * written before it was recorded), in which case its pid is judged in the reader's namespace.
   */
  readonly pidns?: string | null;
}

export function identityOf(table: ProcessTable): Identity {
  return {
    pid: table.pid,
    start: table.startOf(table.pid) ?? null,
    host: table.hostname(),
    boot: table.bootId() ?? null,
    pidns: table.pidNamespace?.() ?? null,
  };
}

/** Whether the owner of a claim still runs, and why we think so. */
export type Verdict =
  | { readonly alive: true; readonly why: string }
  | { readonly alive: false; readonly why: string };

/**
 * Judges an owner. Only a claim of this host can be judged: another host's is always treated as
 * alive, so a directory shared between hosts never hands one ID to two of them. A claim of
 * another PID namespace of this host is alive while its record (`recordedMs`, renewed by its
 * holder) has not lapsed by more than FOREIGN_CLAIM_GRACE_MS at `now`.
 */
export function judge(
  owner: Identity & { readonly recordedMs?: number | null },
  table: ProcessTable,
  now: number,
): Verdict {
  if (owner.host !== table.hostname()) {
    return {
      alive: true,
      why: `held by pid ${owner.pid} on host ${owner.host}, which this host cannot check`,
    };
  }
  const boot = table.bootId();
  if (owner.boot !== null && boot !== undefined && owner.boot !== boot) {
    return { alive: false, why: `pid ${owner.pid} ran before this host last booted` };
  }
  const ns = table.pidNamespace?.();
  if (owner.pidns != null && ns !== undefined && owner.pidns !== ns) {
    const where = `pid ${owner.pid} of another PID namespace (${owner.pidns}, this process is in ${ns})`;
    const recorded = owner.recordedMs;
    // Without a record there is nothing to judge by: never taken (a reboot clears it).
    if (recorded == null) return { alive: true, why: `held by ${where}, with no record to judge by` };
    const lapsedMs = now - recorded;
    if (lapsedMs > FOREIGN_CLAIM_GRACE_MS) {
      return {
        alive: false,
        why: `${where} stopped renewing its record ${Math.round(lapsedMs)} ms ago`,
      };
    }
    return { alive: true, why: `held by ${where}, renewed until ${new Date(recorded).toISOString()}` };
  }
  if (!table.exists(owner.pid)) return { alive: false, why: `pid ${owner.pid} is not running` };
  if (owner.start !== null) {
    const start = table.startOf(owner.pid);
    if (start !== undefined && start !== owner.start) {
      return {
        alive: false,
        why: `pid ${owner.pid} now belongs to another process (started at ${start}, not ${owner.start})`,
      };
    }
  }
  return { alive: true, why: `held by pid ${owner.pid}, which is running` };
}
