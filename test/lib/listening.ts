// For the tests that run a program as a process and wait for what it prints: ids-server's URL
// once it listens, a fixture's first line.
import type { ChildProcess } from 'node:child_process';

/** The first match of `pattern` in what `child` prints on stdout. @throws when it exits first. */
export function printed(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  let out = '';
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = pattern.exec(out);
      if (match) resolve(match);
    });
    child.once('close', (code) =>
      reject(new Error(`exited with ${code} before printing ${pattern}: ${out}${err}`)),
    );
  });
}

/** The URL ids-server prints once it listens. @throws when it exits first. */
export async function listening(child: ChildProcess): Promise<string> {
  return (await printed(child, /listening on (http:\/\/\S+)/))[1] as string;
}
