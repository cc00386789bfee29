import { setLongTimeout } from '@ids/engine/internal';

/** What a call bounded by `bounded` rejects with when its time is up; each store turns it into its unavailable error. */
export class StoreTimeout extends Error {
  override readonly name = 'StoreTimeout';
}

/**
 * Runs `fn` and rejects with StoreTimeout once `ms` have passed without an answer (plus 50 ms, so
 * that a deadline the client enforces itself fires first and reports its own reason). `fn` gets
 * the same time limit as a promise, to race steps inside it against; the timer is cleared when
 * the call settles.
 */
export async function bounded<T>(ms: number, fn: (timeUp: Promise<never>) => Promise<T>): Promise<T> {
  let cancel: () => void = () => undefined;
  const timeUp = new Promise<never>((_, reject) => {
    // A long timer: a timeoutMs past 24.8 days would otherwise time out after 1 ms.
    cancel = setLongTimeout(() => reject(new StoreTimeout()), ms + 50);
  });
  try {
    return await Promise.race([fn(timeUp), timeUp]);
  } finally {
    cancel();
  }
}
