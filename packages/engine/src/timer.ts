/**
 * The longest delay a Node or browser timer honours: 2^31 - 1 ms, about 24.8 days. A longer one
 * fires after 1 ms (Node adds a TimeoutOverflowWarning), so a wait built on it alone turned into
 * a poll loop that burnt CPU and never ended.
 */
export const TIMER_MAX_MS = 2 ** 31 - 1;

/** Where long timeouts read the time and arm the platform's timers; tests pass a fake. */
export interface TimerHost {
  /** Monotonic ms (performance.now). */
  now(): number;
  /** Arms one platform timer for `ms`, never more than TIMER_MAX_MS; returns its handle. */
  set(fn: () => void, ms: number): unknown;
  /** Cancels a timer `set` returned. */
  clear(handle: unknown): void;
}

/** performance.now() and the global setTimeout, looked up at each call. */
export const realTimerHost: TimerHost = Object.freeze({
  now: () => performance.now(),
  set: (fn: () => void, ms: number): unknown => setTimeout(fn, ms),
  clear: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/** Options of setLongTimeout. */
export interface LongTimeoutOptions {
  /** Do not keep the process alive for this timeout (Node's `unref`). Default false. */
  readonly unref?: boolean;
  /** Aborting it cancels the timeout: `fn` is not called (an aborted signal arms nothing). */
  readonly signal?: AbortSignal | undefined;
  /** Default realTimerHost. */
  readonly host?: TimerHost;
}

/**
 * Calls `fn` once `ms` have passed, however long that is: the one way every wait of the @ids
 * packages arms a timer. Up to TIMER_MAX_MS it is a single timer, exactly as setTimeout; past it
 * the wait is armed in pieces of at most TIMER_MAX_MS, each for what is left on the host's
 * monotonic clock when the previous one fires (a wait of 1e15 ms arms 465,662 timers over its
 * 31,700 years, never a poll). Returns a function that cancels it; safe to call more than once,
 * or after `fn` ran.
 */
export function setLongTimeout(fn: () => void, ms: number, options: LongTimeoutOptions = {}): () => void {
  const host = options.host ?? realTimerHost;
  const signal = options.signal;
  if (signal?.aborted) return () => undefined;
  const until = host.now() + ms;
  let handle: unknown;
  let live = true;
  const cancel = (): void => {
    if (!live) return;
    live = false;
    host.clear(handle);
    signal?.removeEventListener('abort', cancel);
  };
  const fire = (): void => {
    live = false;
    signal?.removeEventListener('abort', cancel);
    fn();
  };
  const arm = (left: number): void => {
    handle =
      left > TIMER_MAX_MS ? host.set(() => arm(until - host.now()), TIMER_MAX_MS) : host.set(fire, left);
    if (options.unref) (handle as { unref?: () => void } | undefined)?.unref?.();
  };
  signal?.addEventListener('abort', cancel, { once: true });
  arm(ms);
  return cancel;
}
