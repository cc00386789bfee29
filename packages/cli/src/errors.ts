import {
  AmbiguousIdError,
  IdsError,
  InvalidArgumentError,
  InvalidIdError,
  InvalidLayoutError,
  InvalidMachineIdError,
  MissingPackageError,
  StartTimeAheadError,
} from '@ids/engine';
import { errorText } from '@ids/engine/internal';

/** The command line itself is wrong: an unknown command or option, a missing or malformed value. */
export class UsageError extends IdsError {
  readonly code = 'ERR_IDS_USAGE';
  override readonly name = 'UsageError';
}

/** Writing the output failed (a full disk, /dev/full, a closed terminal); `cause` holds the system error. Exit 1. */
export class OutputError extends IdsError {
  readonly code = 'ERR_IDS_OUTPUT';
  override readonly name = 'OutputError';
}

/** Exit code 0: the command did what was asked. */
export const EXIT_OK = 0;
/** Exit code 1: the command line was fine but running it failed (no machine ID could be chosen, say). */
export const EXIT_FAILURE = 1;
/**
 * Exit code 2: what was asked cannot run as typed and configured: a mistake in the command line
 * (unknown option, malformed ID, layout or machine ID), or an optional package it needs not
 * installed. `ids-server` answers both with 2 too.
 */
export const EXIT_USAGE = 2;

// In the command, these can only come from values the user typed (IDs, layout specs with their
// bits, unit and epoch, machine IDs, formats, options), or from a store or command asked for
// whose package is not installed (as ids-server counts it: the configuration's fault). Retrying
// cannot help; anything else failed while running.
const USER_INPUT_ERRORS = [
  MissingPackageError,
  UsageError,
  InvalidIdError,
  AmbiguousIdError,
  InvalidLayoutError,
  StartTimeAheadError,
  InvalidMachineIdError,
  InvalidArgumentError,
];

/** The exit code for an error: 2 (EXIT_USAGE) for a mistake in what was typed, else 1 (EXIT_FAILURE). */
export function exitCodeOf(error: unknown): number {
  return USER_INPUT_ERRORS.some((type) => error instanceof type) ? EXIT_USAGE : EXIT_FAILURE;
}

/**
 * The one stderr line for an error: the command, the error's code, its message on one line.
 * No stack: a stack is for bugs, and IDS_DEBUG=1 prints it.
 */
export function errorLine(command: string, error: unknown, hint?: string): string {
  const code =
    typeof (error as { code?: unknown })?.code === 'string'
      ? (error as { code: string }).code
      : 'ERR_UNEXPECTED';
  const message = errorText(error).replace(/\s*\n\s*/g, ' ');
  return `ids${command ? ` ${command}` : ''}: error ${code}: ${message}${hint ? ` (${hint})` : ''}\n`;
}
