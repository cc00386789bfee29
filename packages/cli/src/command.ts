import { ENCODING_NAMES, ENCODINGS, type EncodingName, type Layout } from '@ids/engine';
import { HELP_WIDTH, wrapWords } from '@ids/engine/internal';
import type { AutoMachineId } from '@ids/machine-file';
import { UsageError } from './errors.js';
import type { Io } from './io.js';
import { LAYOUT_SPEC_HELP } from './layouts.js';
import { chooseMachineId } from './machine-id.js';
import { columns } from './table.js';

/** One subcommand of `ids`: its name, its help, and what it does (see COMMANDS). */
export interface Command {
  /** What is typed after `ids`, e.g. "generate". */
  readonly name: string;
  /** One line for `ids --help`. */
  readonly summary: string;
  /** The whole `ids <name> --help` text, or how to load it (from a package that may not be installed). */
  readonly help: string | (() => Promise<string>);
  /** Resolves with the exit code; throws for errors (the caller prints them and picks 1 or 2). `--help` never reaches it. */
  run(args: string[], io: Io): Promise<number>;
}

/** The options several commands share, as node:util parseArgs takes them. */
export const OPTIONS = {
  layout: { type: 'string', short: 'l' },
  'machine-id': { type: 'string', short: 'm' },
  format: { type: 'string', short: 'f' },
  json: { type: 'boolean' },
} as const;

/** The machine ID for a layout, from --machine-id, the environment or the host (see machine-id.ts); `zookeeper` is `--zookeeper`. */
export function machineIdFor(
  layout: Layout,
  flag: string | undefined,
  io: Io,
  zookeeper?: string,
): Promise<AutoMachineId> {
  return chooseMachineId({
    bits: layout.machineBits,
    flag,
    ...(zookeeper !== undefined ? { zookeeper } : {}),
    env: io.env,
    ...(io.interfaces ? { interfaces: io.interfaces } : {}),
  });
}

export function parseFormat(text: string): EncodingName {
  if (!(ENCODING_NAMES as readonly string[]).includes(text)) {
    throw new UsageError(
      `--format: expected one of ${ENCODING_NAMES.join(', ')}, received ${JSON.stringify(text)}`,
    );
  }
  return text as EncodingName;
}

/**
 * A list inside an option's help: two aligned columns, indented by four, each description cut to
 * end within HELP_WIDTH, its further lines starting under it.
 */
const sublist = (rows: readonly (readonly [string, string])[]) => {
  const at = 4 + Math.max(...rows.map(([name]) => name.length)) + 2;
  const wrapped = rows.flatMap(([name, text]) =>
    wrapWords(text, HELP_WIDTH - at).map((line, i) => [i === 0 ? name : '', line]),
  );
  return columns(wrapped)
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
};

export const LAYOUT_HELP = `  -l, --layout SPEC     the layout, one of:\n${sublist(LAYOUT_SPEC_HELP)}`;

export const FORMAT_HELP = `  -f, --format NAME     one of:\n${sublist(ENCODING_NAMES.map((n) => [n, ENCODINGS[n].description] as const))}`;

/** The exit codes as every help ends with them; ids-server's help words the same three (README table). */
export const EXIT_HELP =
  'Exit codes: 0 done, 1 failed while running, 2 a mistake in the command line or a package it\nneeds not installed.';

/** A command's `--help` text: `usage` (its usage line, description and options) with the lines every command ends with. */
export function commandHelp(usage: string): string {
  return `${usage}  -h, --help            this text\n\n${EXIT_HELP}\n`;
}
