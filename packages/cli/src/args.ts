import { type ParseArgsConfig, parseArgs } from 'node:util';
import { closestName, errorText } from '@ids/engine/internal';
import { UsageError } from './errors.js';
import { int } from './table.js';

/**
 * Parses a command's arguments with node:util parseArgs in strict mode, and turns its errors into
 * one short UsageError line. Node's own messages go on about '--' after their first sentence; the
 * first is the point. An unknown option names the command's nearest one (`--cont`: did you mean
 * --count?).
 */
export function parseCommandLine<const T extends Omit<ParseArgsConfig, 'strict'>>(
  config: T,
): ReturnType<typeof parseArgs<T & { strict: true }>> {
  try {
    return parseArgs({ ...config, strict: true });
  } catch (error) {
    const first = errorText(error).split('. ')[0]!.replace(/\.$/, '');
    const unknown = (error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
    const typed = unknown ? /'([^']+)'/.exec(first)?.[1] : undefined;
    const known = Object.entries(config.options ?? {}).flatMap(([name, option]) => [
      `--${name}`,
      ...(option.short ? [`-${option.short}`] : []),
    ]);
    const near = typed === undefined ? undefined : closestName(typed, [...known, '--help', '-h']);
    throw new UsageError(near ? `${first}; did you mean ${near}?` : first);
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
