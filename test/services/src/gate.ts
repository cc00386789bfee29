/**
 * A promise that a test settles when it chooses: a step of the code under test awaits `opened`
 * (a slow write, a request still running) until the test has seen what it waits for and calls
 * `open()`.
 */
export interface Gate {
  /** Resolves once `open()` is called. */
  readonly opened: Promise<void>;
  /** Lets everything awaiting `opened` go on; later calls do nothing. */
  open(): void;
}

/** A closed gate. */
export function gate(): Gate {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
