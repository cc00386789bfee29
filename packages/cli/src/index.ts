// @ids/cli: the `ids` command, and the pieces it is made of for programs that want them.
export type { Command, Flag, Flags } from './command.js';
export { comparisonRows } from './commands/compare.js';
export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, exitCodeOf, UsageError } from './errors.js';
export type { Io } from './io.js';
export { type CliLayout, DEFAULT_COMPARISON, parseLayout } from './layouts.js';
export { chooseMachineId, type MachineIdOptions } from './machine-id.js';
export { COMMANDS, type CommandEntry, run } from './run.js';
