import type { Readable, Writable } from 'node:stream';
import type { InterfaceSource } from '@ids/machine-ip';

/** What a command reads and writes; the real process's by default, fakes in tests. */
export interface Io {
  readonly stdout: Writable & { readonly isTTY?: boolean };
  readonly stderr: Writable & { readonly isTTY?: boolean; readonly columns?: number };
  /** Read by `ids decompose` when no ID is given on the command line and stdin is not a terminal. */
  readonly stdin?: Readable & { readonly isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The network interfaces for the private IPv4 step (default: the host's). */
  readonly interfaces?: InterfaceSource;
}

export function processIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

/** Resolves once the stream can take more (or can take nothing more: closed or failed). */
export function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      stream.off('error', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    stream.on('error', done);
  });
}

/** Writes text and waits for the stream to flush it if it is backed up. */
export async function print(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await drained(stream);
}

export async function readAll(stream: Readable): Promise<string> {
  let text = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) text += chunk;
  return text;
}
