import { type ParseArgsConfig, parseArgs } from 'node:util';
import { joinNegativeValues, type OptionSpec, optionErrorText } from '@ids/engine/internal';
import { UsageError } from './errors.js';

type ParseSpec = OptionSpec & { readonly multiple?: boolean };

import { int } from './table.js';

/**
 * Parses a command's arguments with node:util parseArgs in strict mode. Its errors become one
 * UsageError line in the project's words (engine's optionErrorText: what was expected, what was
 * received, the nearest option for a mistyped one), and a negative number given to an option
 * reaches that option's own check (`-n -1`: --count: expected a whole number ...) instead of
 * parseArgs' "argument is ambiguous".
 */
export function parseCommandLine<const T extends Omit<ParseArgsConfig, 'strict'>>(
  config: T,
): ReturnType<typeof parseArgs<T & { strict: true }>> {
  // Only what parseArgs reads of each declaration: the help's words stay out of its checks.
  const declared = { ...config.options, help: { type: 'boolean', short: 'h' } } as Record<string, ParseSpec>;
  const options = Object.fromEntries(
    Object.entries(declared).map(([name, { type, short, multiple }]) => [
      name,
      { type, ...(short ? { short } : {}), ...(multiple ? { multiple } : {}) },
    ]),
  );
  try {
    const args = joinNegativeValues(config.args ?? [], options);
    return parseArgs({ ...config, options, args, strict: true }) as ReturnType<
      typeof parseArgs<T & { strict: true }>
    >;
  } catch (error) {
    throw new UsageError(optionErrorText(error, options), { cause: error });
  }
}

/** A whole number from `min` to `max`, written in digits (underscores allowed: 1_000_000). */
export function parseCount(text: string, what: string, min: number, max: number): number {
  const digits = text.replaceAll('_', '');
  // Whole numbers in digits, or as a power of ten written the short way (1e6, 2e9): what people
  // type for large counts. No fractions, signs or hex.
  const short = /^([1-9][0-9]{0,2})e([0-9]{1,2})$/i.exec(digits);
  const value = /^[0-9]{1,16}$/.test(digits)
    ? Number(digits)
    : short
      ? Number(short[1]) * 10 ** Number(short[2])
      : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(
      `${what}: expected a whole number from ${int(min)} to ${int(max)}, received ${JSON.stringify(text)}`,
    );
  }
  return value;
}
