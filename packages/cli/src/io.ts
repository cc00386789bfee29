import type { Readable, Writable } from 'node:stream';
import type { InterfaceSource } from '@ids/machine-ip';

/** What a command reads and writes; the real process's by default, fakes in tests. */
export interface Io {
  /** Where results go (IDs, tables, JSON, help), and nothing else, so they can be piped. */
  readonly stdout: Writable & {
    /** True when it is a terminal, as on process.stdout. */
    readonly isTTY?: boolean;
  };
  /** Where errors and the progress bar go. */
  readonly stderr: Writable & {
    /** True when it is a terminal: the progress bar is drawn only then. */
    readonly isTTY?: boolean;
    /** The terminal's width, as on process.stderr. */
    readonly columns?: number;
  };
  /** Read by `ids decompose` when no ID is given on the command line and stdin is not a terminal. */
  readonly stdin?: Readable & {
    /** True when it is a terminal: then it is not read, since nobody is piping IDs in. */
    readonly isTTY?: boolean;
  };
  /** The environment: IDS_MACHINE_ID, IDS_CLAIM_DIR (or XDG_STATE_HOME) and IDS_DEBUG are read from it. */
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
