import { closestName } from '@ids/engine/internal';
import packageJson from '../package.json';
import type { Command } from './command.js';
import { EXIT_HELP } from './command.js';
import { compare } from './commands/compare.js';
import { decompose } from './commands/decompose.js';
import { generate } from './commands/generate.js';
import { inspect } from './commands/inspect.js';
import { lock } from './commands/lock.js';
import { machineId } from './commands/machine-id.js';
import { segment } from './commands/segment.js';
import { serve } from './commands/serve.js';
import { EXIT_USAGE, errorLine, exitCodeOf, UsageError } from './errors.js';
import { checkOutput, type Io, print, processIo } from './io.js';

/** The commands of `ids`, in the order `ids --help` lists them. */
export const COMMANDS: readonly Command[] = [
  generate,
  decompose,
  compare,
  machineId,
  inspect,
  serve,
  segment,
  lock,
];

const HELP = `Usage: ids <command> [options]

Sonyflake and snowflake IDs from the command line.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(12)}${c.summary}`).join('\n')}

Options:
  -h, --help     this text; ids <command> --help shows a command's options
  -v, --version  print the version

ids alone prints this text on stderr and exits 2. IDS_DEBUG=1 prints the stack of an unexpected
error.

${EXIT_HELP}
`;

/**
 * Runs the `ids` command line (without the leading `node ids`) and resolves with the exit code:
 * 0 done, 1 failed while running, 2 a mistake in the command line. Every error becomes one line
 * on stderr with its code; none is thrown.
 */
export async function run(args: readonly string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = args;
  let command: Command | undefined;
  try {
    // `ids` alone did nothing that was asked, as with git, docker or kubectl: the help goes to
    // stderr, so a script that lost its arguments sees a failure and no output to parse.
    if (name === undefined) {
      io.stderr.write(HELP);
      return EXIT_USAGE;
    }
    if (name === '--help' || name === '-h' || name === 'help') {
      const topic = name === 'help' ? rest[0] : undefined;
      const about = topic === undefined ? undefined : COMMANDS.find((c) => c.name === topic);
      if (topic !== undefined && !about) throw new UsageError(`no command ${JSON.stringify(topic)}`);
      await print(io.stdout, about ? await helpOf(about) : HELP);
      return 0;
    }
    if (name === '--version' || name === '-V' || name === '-v') {
      await print(io.stdout, `${packageJson.version}\n`);
      return 0;
    }
    command = COMMANDS.find((c) => c.name === name);
    if (!command) {
      const option = name.startsWith('-');
      const names = option ? ['--help', '-h', '--version', '-v'] : COMMANDS.map((c) => c.name);
      const near = closestName(name, names);
      throw new UsageError(
        `unknown ${option ? 'option' : 'command'} ${JSON.stringify(name)}; ${near ? `did you mean ${near}? ` : ''}expected ${option ? 'a command, or ' : ''}one of ${names.join(', ')}`,
      );
    }
    // -h/--help anywhere before a `--` shows the command's help, whatever else was typed.
    const end = rest.indexOf('--');
    if ((end < 0 ? rest : rest.slice(0, end)).some((arg) => arg === '--help' || arg === '-h')) {
      await print(io.stdout, await helpOf(command));
      return 0;
    }
    const code = await command.run([...rest], io);
    // What a command wrote without `print` (`ids serve`'s log and help) fails the same way.
    if (code === 0) checkOutput(io.stdout);
    return code;
  } catch (error) {
    const code = exitCodeOf(error);
    const hint =
      error instanceof UsageError ? `see ids ${command ? `${command.name} ` : ''}--help` : undefined;
    io.stderr.write(errorLine(command?.name ?? '', error, hint));
    if (io.env.IDS_DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    return code;
  }
}

/** A command's help text, loaded first when it lives in another package. */
async function helpOf(command: Command): Promise<string> {
  return typeof command.help === 'string' ? command.help : command.help();
}
