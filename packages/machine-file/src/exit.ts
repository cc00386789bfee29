/** Something to give back, synchronously, when the process exits normally. */
export interface ReleasedAtExit {
  /** Called from the 'exit' event, which allows only synchronous work; must not throw. */
  releaseAtExit(): void;
}

const held = new Set<ReleasedAtExit>();
let hooked = false;

/**
 * The host claims and file locks to release when the process exits normally. One 'exit'
 * listener serves them all, added on the first `add`.
 */
export const atExit = {
  add(item: ReleasedAtExit): void {
    held.add(item);
    if (hooked) return;
    hooked = true;
    process.on('exit', () => {
      for (const each of held) each.releaseAtExit();
    });
  },
  delete(item: ReleasedAtExit): void {
    held.delete(item);
  },
};
