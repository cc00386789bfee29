import { type Command, defineCommand, type Flags } from '../command.js';
import { UsageError } from '../errors.js';
import { print } from '../io.js';

const FLAGS = {
  html: { type: 'boolean', help: 'write the page to stdout (required; refused when stdout is a terminal)' },
} as const satisfies Flags;

export const inspect: Command = defineCommand({
  name: 'inspect',
  summary: 'write the ID inspector and layout comparison page (--html > layouts.html)',
  flags: FLAGS,
  usage: `Usage: ids inspect --html > layouts.html

Writes the ID inspector as one self-contained HTML file: paste IDs (decimal, hex, base32,
base58, base36) to see their 64 bits grouped by field, their decoded values and the start of
their tick, with a warning when the chosen layout reads them implausibly; and Sonyflake,
Sonyflake v2, Twitter, Discord and a custom layout side by side (bits, lifetime, IDs/s,
machines). The file needs no network: open it from disk, or serve it.`,
  positionals: false,
  async run({ values }, io) {
    if (!values.html) {
      throw new UsageError(
        'expected --html: the page is the only output (ids inspect --html > layouts.html)',
      );
    }
    // 30 KB of minified HTML scrolling past is never what was meant.
    if (io.stdout.isTTY) {
      throw new UsageError(
        'stdout is a terminal: redirect the page to a file (ids inspect --html > layouts.html)',
      );
    }
    // Loaded here, not on top: the page is large, and no other command uses it.
    const { inspectorHtml } = await import('@ids/inspector');
    await print(io.stdout, inspectorHtml());
    return 0;
  },
});
