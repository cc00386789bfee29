// For the tests that run ids-server as a process: the URL it prints once it listens.
import type { ChildProcess } from 'node:child_process';

/** The URL ids-server prints once it listens. @throws when it exits first. */
export function listening(child: ChildProcess): Promise<string> {
  let out = '';
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1] as string);
    });
    child.once('close', (code) =>
      reject(new Error(`ids-server exited with ${code} before listening: ${out}${err}`)),
    );
  });
}
