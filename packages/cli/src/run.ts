import { closestName } from '@ids/engine/internal';
import type { Command } from './command.js';
import { EXIT_USAGE, errorLine, exitCodeOf, UsageError } from './errors.js';
import { checkOutput, type Io, print, processIo } from './io.js';
import { VERSION, VERSION_FLAGS } from './version.js';

/**
 * A command of `ids` before it is loaded: its name, and how to load it. Each command is a module
 * of its own, loaded only when it runs (or its help is asked for), so that a run pays only for
 * what its command imports: `ids generate` does not load ids lock's child_process, decompose's
 * readings or the layouts' comparison.
 */
export interface CommandEntry {
  /** What is typed after `ids`, e.g. "generate". */
  readonly name: string;
  /** The command itself. */
  load(): Promise<Command>;
}

/** The commands of `ids`, in the order `ids --help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'generate', load: async () => (await import('./commands/generate.js')).generate },
  { name: 'decompose', load: async () => (await import('./commands/decompose.js')).decompose },
  { name: 'compare', load: async () => (await import('./commands/compare.js')).compare },
  { name: 'machine-id', load: async () => (await import('./commands/machine-id.js')).machineId },
  { name: 'inspect', load: async () => (await import('./commands/inspect.js')).inspect },
  { name: 'serve', load: async () => (await import('./commands/serve.js')).serve },
  { name: 'segment', load: async () => (await import('./commands/segment.js')).segment },
  { name: 'lock', load: async () => (await import('./commands/lock.js')).lock },
];

/** `ids --help`: every command with its summary (each command is loaded for it). */
async function topHelp(): Promise<string> {
  const [{ EXIT_HELP }, ...commands] = await Promise.all([
    import('./command.js'),
    ...COMMANDS.map((c) => c.load()),
  ]);
  return `Usage: ids <command> [options]

Sonyflake and snowflake IDs from the command line.

Commands:
${commands.map((c) => `  ${c.name.padEnd(12)}${c.summary}`).join('\n')}

Options:
  -h, --help     this text; ids <command> --help shows a command's options
  -v, --version  print the version

ids alone prints this text on stderr and exits 2. IDS_DEBUG=1 prints the stack of an unexpected
error.

${EXIT_HELP}
`;
}

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
      io.stderr.write(await topHelp());
      return EXIT_USAGE;
    }
    if (name === '--help' || name === '-h' || name === 'help') {
      const topic = name === 'help' ? rest[0] : undefined;
      const about = topic === undefined ? undefined : COMMANDS.find((c) => c.name === topic);
      if (topic !== undefined && !about) throw new UsageError(`no command ${JSON.stringify(topic)}`);
      await print(io.stdout, about ? await helpOf(await about.load()) : await topHelp());
      return 0;
    }
    if (VERSION_FLAGS.includes(name)) {
      await print(io.stdout, `${VERSION}\n`);
      return 0;
    }
    const entry = COMMANDS.find((c) => c.name === name);
    if (!entry) {
      const option = name.startsWith('-');
      const names = option ? ['--help', '-h', '--version', '-v'] : COMMANDS.map((c) => c.name);
      const near = closestName(name, names);
      throw new UsageError(
        `unknown ${option ? 'option' : 'command'} ${JSON.stringify(name)}; ${near ? `did you mean ${near}? ` : ''}expected ${option ? 'a command, or ' : ''}one of ${names.join(', ')}`,
      );
    }
    command = await entry.load();
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
