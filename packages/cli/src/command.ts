import { ENCODING_NAMES, ENCODINGS, type EncodingName, type Layout } from '@ids/engine';
import { HELP_WIDTH, type OptionSpec, wrapWords } from '@ids/engine/internal';
import type { AutoMachineId } from '@ids/machine-file';
import { parseCommandLine } from './args.js';
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
  /** Its options, declared once: what it parses, and what its help and the README list. */
  readonly flags?: Flags;
  /** Resolves with the exit code; throws for errors (the caller prints them and picks 1 or 2). `--help` never reaches it. */
  run(args: string[], io: Io): Promise<number>;
}

/**
 * An option of a command, declared once: parseArgs reads its type and short name, `--help` prints
 * the rest (commandHelp), and the README's option table is written from it (test/readme-options).
 */
export interface Flag extends OptionSpec {
  /** Given more than once, every value is kept (parseArgs' `multiple`). */
  readonly multiple?: boolean;
  /** The name of its value in help (`N` in `--count N`); none for a switch. */
  readonly value?: string;
  /** What it does. */
  readonly help: string;
  /** The environment variable read when it is not given. */
  readonly env?: string;
  /** Its default in words, when neither it nor its variable is given. */
  readonly byDefault?: string;
  /** The values it takes, each with what it means: listed under it in help. */
  readonly choices?: readonly (readonly [string, string])[];
}

/** A command's options by their long names. */
export type Flags = Readonly<Record<string, Flag>>;

/** The options several commands share; a command changes their words with a spread. */
export const OPTIONS = {
  layout: {
    type: 'string',
    short: 'l',
    value: 'SPEC',
    help: 'the layout',
    byDefault: 'sonyflake',
    choices: LAYOUT_SPEC_HELP,
  },
  'machine-id': {
    type: 'string',
    short: 'm',
    value: 'N',
    help: 'an explicit machine ID',
    env: 'IDS_MACHINE_ID',
    byDefault: 'the auto chain',
  },
  format: {
    type: 'string',
    short: 'f',
    value: 'NAME',
    help: 'the encoding',
    byDefault: 'decimal',
    choices: ENCODING_NAMES.map((name) => [name, ENCODINGS[name].description] as const),
  },
  json: { type: 'boolean', help: 'print JSON' },
} as const satisfies Flags;

/** What follows an option's words in help: its variable and its default. */
function flagDefault(flag: Flag): string {
  if (flag.env !== undefined && flag.byDefault !== undefined)
    return ` (default: ${flag.env}, else ${flag.byDefault})`;
  if (flag.env !== undefined) return ` (else ${flag.env})`;
  return flag.byDefault === undefined ? '' : ` (default ${flag.byDefault})`;
}

/** The column where options' words start in help. */
const WORDS_AT = 24;

/** An `Options:` list: each flag's names, then its words wrapped within HELP_WIDTH, then its choices. */
function flagLines(flags: Flags): string {
  return Object.entries(flags)
    .map(([name, flag]) => {
      const names = `  ${flag.short ? `-${flag.short}, ` : '    '}--${name}${flag.value ? ` ${flag.value}` : ''}`;
      const words = `${flag.help}${flagDefault(flag)}${flag.choices ? ', one of:' : ''}`;
      const lines = wrapWords(words, HELP_WIDTH - WORDS_AT).map((line, i) =>
        i === 0 ? `${names.padEnd(WORDS_AT)}${line}` : `${' '.repeat(WORDS_AT)}${line}`,
      );
      return [...lines, ...(flag.choices ? [sublist(flag.choices)] : [])].join('\n');
    })
    .join('\n');
}

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

/** The exit codes as every help ends with them; ids-server's help words the same three (README table). */
export const EXIT_HELP =
  'Exit codes: 0 done, 1 failed while running, 2 a mistake in the command line or a package it\nneeds not installed.';

/**
 * A command's `--help` text: `usage` (its usage line and description), its options as declared,
 * and the lines every command ends with.
 */
export function commandHelp(usage: string, flags: Flags): string {
  return `${usage.trimEnd()}\n\nOptions:\n${flagLines(flags)}\n${'  -h, --help'.padEnd(WORDS_AT)}this text\n\n${EXIT_HELP}\n`;
}

/** A command's arguments as its declared flags parse them. */
export type ParsedLine<F extends Flags> = ReturnType<
  typeof parseCommandLine<{ args: string[]; options: F; allowPositionals: true }>
>;

/**
 * A command from its declaration: the flags are given once, and serve as its parser, its help
 * (`usage` then the flags' lines) and the README's table. `run` receives the parsed line;
 * `positionals: false` makes any argument that is not an option a usage error.
 */
export function defineCommand<const F extends Flags>(spec: {
  readonly name: string;
  readonly summary: string;
  readonly flags: F;
  readonly usage: string;
  readonly positionals: boolean;
  run(line: ParsedLine<F>, io: Io): Promise<number>;
}): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    flags: spec.flags,
    help: commandHelp(spec.usage, spec.flags),
    run: (args, io) =>
      spec.run(
        parseCommandLine({ args, options: spec.flags, allowPositionals: spec.positionals }) as ParsedLine<F>,
        io,
      ),
  };
}
