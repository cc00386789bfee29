// The wording of command-line option errors, shared by `ids` and `ids-server`, both of which parse
// with node:util's parseArgs. Its messages are Node's ("Option '-n, --count <value>' argument is
// ambiguous. Did you forget to specify the option argument for '-n'? To specify ..."): three
// sentences about `--` that answer no question the user had. Pure functions of the parser's
// declaration and error, with no Node import: this package is bundled into the inspector page.
import { closestName, errorText } from './check.js';

/** An option as parseArgs declares it: enough to know its names and whether it takes a value. */
export interface OptionSpec {
  /** `string`: the option takes a value; `boolean`: it is a switch. */
  readonly type: 'string' | 'boolean';
  /** Its one-letter name (`n` for `-n`), if it has one. */
  readonly short?: string;
}

/**
 * The arguments with each negative number given to an option that takes a value joined to it
 * (`-n -1` becomes `--count=-1`), up to a `--`. parseArgs refuses a value that begins with a dash
 * as "ambiguous"; joined, the value reaches the option's own check, which says what it expected
 * (`--count: expected a whole number from 1 ...`). Other dashed words stay options.
 */
export function joinNegativeValues(
  args: readonly string[],
  options: Readonly<Record<string, OptionSpec>>,
): string[] {
  const takesValue = (arg: string): string | undefined => {
    const long = /^--([^=]+)$/.exec(arg)?.[1];
    if (long !== undefined) return options[long]?.type === 'string' ? long : undefined;
    const short = /^-([^-])$/.exec(arg)?.[1];
    const found = Object.entries(options).find(([, spec]) => spec.short === short);
    return found && found[1].type === 'string' ? found[0] : undefined;
  };
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const name = takesValue(arg);
    const next = args[i + 1];
    if (name !== undefined && next !== undefined && /^-[0-9.]/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * One line in the project's words for an error of parseArgs (strict mode) over `options`: what
 * was expected and what was received, and the nearest option for an unknown one. Errors that are
 * not parseArgs' come back as their message.
 */
export function optionErrorText(error: unknown, options: Readonly<Record<string, OptionSpec>>): string {
  const code = (error as { code?: unknown } | null)?.code;
  const text = errorText(error);
  const quoted = /'([^']+)'/.exec(text)?.[1] ?? '';
  const names = Object.entries(options).flatMap(([name, spec]) => [
    `--${name}`,
    ...(spec.short ? [`-${spec.short}`] : []),
  ]);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const near = closestName(quoted, names);
    // A list past a dozen is read in the help, not in an error line.
    const longs = Object.keys(options).map((name) => `--${name}`);
    const expected = longs.length <= 12 ? `one of ${longs.join(', ')}` : 'an option --help lists';
    return `unknown option ${JSON.stringify(quoted)}; ${near ? `did you mean ${near}? ` : ''}expected ${expected}`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    return `expected options only, received the argument ${JSON.stringify(quoted)}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // The option as Node names it: "-n, --count <value>" or "--json".
    const long = /--[^\s',<]+/.exec(quoted)?.[0] ?? quoted;
    if (/does not take an argument/.test(text)) {
      return `${long}: expected no value (it is a switch), received one`;
    }
    if (/argument is ambiguous/.test(text)) {
      return `${long}: expected a value, received the option that follows it (write ${long}=VALUE for a value that starts with a dash)`;
    }
    return `${long}: expected a value, received nothing`;
  }
  return text.split('\n')[0]!;
}

/** The widest line of every help text of `ids` and `ids-server`: a terminal split in two. */
export const HELP_WIDTH = 100;

/**
 * `text` cut into lines of at most `width` characters at spaces (a word longer than `width` has a
 * line of its own): for the last column of a help list, whose continuation lines start at that
 * column.
 */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines;
}
