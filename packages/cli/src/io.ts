import type { Readable, Writable } from 'node:stream';
import { errorText } from '@ids/engine/internal';
import type { InterfaceSource } from '@ids/machine-ip';
import { errorLine, OutputError } from './errors.js';

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
  /** The wall clock in Unix ms (default Date.now): `ids decompose` judges an ID's date against it. */
  readonly now?: () => number;
}

export function processIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

/** Resolves once the stream can take more (or can take nothing more: closed or failed). */
function drained(stream: Writable): Promise<void> {
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

/** The error a stream failed with, EPIPE included; null while it works. */
function erroredOf(stream: Writable): Error | null {
  return (stream as Writable & { errored?: Error | null }).errored ?? null;
}

/** The error a stream failed with, unless it is EPIPE: a reader that left (`ids ... | head`) is not a failure. */
function failureOf(stream: Writable): Error | null {
  const error = erroredOf(stream);
  return error && (error as NodeJS.ErrnoException).code !== 'EPIPE' ? error : null;
}

function outputError(error: Error): OutputError {
  return new OutputError(`could not write the output: ${errorText(error)}`, { cause: error });
}

/**
 * Throws the OutputError for a stream that failed, other than by its reader leaving (EPIPE):
 * for output written without `print` (help, `ids serve`'s log), checked when the command ends.
 */
export function checkOutput(stream: Writable): void {
  const failure = failureOf(stream);
  if (failure) throw outputError(failure);
}

/**
 * Writes text and waits for the stream to flush it if it is backed up: the one way a command
 * writes its output, so that every command fails the same way.
 * Resolves with false once the reader has left (EPIPE, `ids ... | head`): the caller stops
 * producing, and the run ends quietly; later writes are dropped.
 * @throws OutputError when the stream failed otherwise (a full disk, /dev/full), so the command
 * ends with one error line, code ERR_IDS_OUTPUT, and exit 1.
 */
export async function print(stream: Writable, text: string): Promise<boolean> {
  if (!stream.write(text) && !erroredOf(stream)) await drained(stream);
  checkOutput(stream);
  return erroredOf(stream) === null;
}

/**
 * Keeps a failing stdout from crashing the process with a stack: its 'error' event is handled
 * (`print` and `run`'s `checkOutput` report the failure), and a failure reported by the stream
 * only after the command ended becomes the same error line and exit code 1.
 * Returns what to do when the command resolves with its exit code.
 */
export function guardOutput(stdout: Writable, stderr: Writable): (code: number) => number {
  stdout.on('error', () => undefined);
  return (code) => {
    const failure = failureOf(stdout);
    return !failure || code !== 0 ? code : reportOutputFailure(failure, stderr);
  };
}

/**
 * The exit code after stdout failed with `error`: 0 when its reader left (EPIPE), else 1 with the
 * one ERR_IDS_OUTPUT line on stderr. For a write whose callback holds the error (`ids
 * --version`): a file stream's `errored` is cleared once it has emitted the error.
 */
export function reportOutputFailure(error: Error, stderr: Writable): number {
  if ((error as NodeJS.ErrnoException).code === 'EPIPE') return 0;
  stderr.write(errorLine('', outputError(error)));
  return 1;
}

/**
 * The complete lines of each chunk a stream delivers, without holding the whole of it (`ids
 * decompose < huge-file`): a caller can act on every batch as it arrives, and answer a line
 * typed into a pipe at once. A last line without a newline comes at the end.
 */
export async function* readLineBatches(stream: Readable): AsyncGenerator<string[]> {
  stream.setEncoding('utf8');
  let rest = '';
  for await (const chunk of stream as AsyncIterable<string>) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    if (lines.length > 0) yield lines;
  }
  if (rest !== '') yield [rest];
}
