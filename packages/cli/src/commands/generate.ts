import { ENCODINGS } from '@ids/engine';
import { parseCount } from '../args.js';
import { type Command, defineCommand, type Flags, machineIdFor, OPTIONS, parseFormat } from '../command.js';
import { print } from '../io.js';
import { parseLayout } from '../layouts.js';
import { noteDuration, noteHostClaim } from '../notes.js';
import { PROGRESS_MIN, progressBar } from '../progress.js';
import { generateScheme, SCHEME_OPTIONS } from '../schemes.js';
import { int } from '../table.js';

/** The most IDs one run writes. */
export const MAX_COUNT = 1_000_000_000;
// IDs taken and written per round: large enough to amortise the write, small enough to keep
// the progress bar and backpressure responsive.
const BATCH = 4096;

const FLAGS = {
  count: {
    type: 'string',
    short: 'n',
    value: 'N',
    help: `how many IDs, 1 to ${int(MAX_COUNT)}: digits or a power of ten (1e6)`,
    byDefault: '1',
  },
  layout: OPTIONS.layout,
  'machine-id': {
    ...OPTIONS['machine-id'],
    help: 'the machine ID; ids machine-id --explain shows the choice',
  },
  format: OPTIONS.format,
  json: { ...OPTIONS.json, help: 'one JSON object: { "layout", "machineId", "ids": [...] }, IDs as strings' },
  'no-progress': {
    type: 'boolean',
    help: `never draw the progress bar (drawn on a terminal for ${int(PROGRESS_MIN)} IDs or more)`,
  },
  ...SCHEME_OPTIONS,
} as const satisfies Flags;

export const generate: Command = defineCommand({
  name: 'generate',
  summary: 'write new IDs to stdout, one per line',
  flags: FLAGS,
  usage: `Usage: ids generate [-n N] [--layout SPEC] [--machine-id N] [--format NAME]

Writes N new IDs to stdout, one per line, in increasing order. With N of ${int(PROGRESS_MIN)} or more
and stderr on a terminal, a progress bar is drawn on stderr. A count that takes a second or more
at the layout's ceiling is announced on stderr with that time; a machine ID that is a host claim
(unique on this host only) is noted there too.`,
  positionals: false,
  async run({ values }, io) {
    const count = parseCount(values.count ?? FLAGS.count.byDefault, '--count', 1, MAX_COUNT);
    if (values.scheme !== undefined || values.store !== undefined || values.tag !== undefined) {
      return generateScheme(values, count, io);
    }
    const { label, layout, generator: build } = parseLayout(values.layout ?? FLAGS.layout.byDefault);
    const encoding = ENCODINGS[parseFormat(values.format ?? FLAGS.format.byDefault)];
    const { machineId: source, id: machineId, step } = await machineIdFor(layout, values['machine-id'], io);
    noteHostClaim(io, step, machineId);
    noteDuration(io, count, layout, label);
    const json = values.json === true;

    const out = io.stdout;
    const generator = build(source);
    const progress = progressBar(count, io.stderr, { enabled: !values['no-progress'] });
    try {
      // print is false once the reader has gone (`ids generate -n 1e9 | head`): the run ends
      // quietly. Any other write failure is thrown as the OutputError every command reports.
      let open =
        !json || (await print(out, `{"layout":${JSON.stringify(label)},"machineId":${machineId},"ids":[`));
      for (let done = 0; done < count && open; ) {
        const ids = await generator.nextIds(Math.min(BATCH, count - done));
        let text = '';
        if (json) {
          for (const [i, id] of ids.entries()) text += `${done + i > 0 ? ',' : ''}"${encoding.encode(id)}"`;
        } else {
          for (const id of ids) text += `${encoding.encode(id)}\n`;
        }
        open = await print(out, text);
        done += ids.length;
        progress.update(done);
      }
      if (json && open) await print(out, ']}\n');
    } finally {
      progress.finish();
      await generator.close();
    }
    return 0;
  },
});
