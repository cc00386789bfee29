import { parseArgs } from 'node:util';
import { ENCODINGS } from '@ids/engine';
import { parseCommandLine, parseCount } from '../args.js';
import {
  type Command,
  EXIT_HELP,
  FORMAT_HELP,
  LAYOUT_HELP,
  machineIdFor,
  OPTIONS,
  parseFormat,
} from '../command.js';
import { drained } from '../io.js';
import { parseLayout } from '../layouts.js';
import { PROGRESS_MIN, progressBar } from '../progress.js';
import { generateScheme, SCHEME_HELP, SCHEME_OPTIONS } from '../schemes.js';

/** The most IDs one run writes. */
export const MAX_COUNT = 1_000_000_000;
// IDs taken and written per round: large enough to amortise the write, small enough to keep
// the progress bar and backpressure responsive.
const BATCH = 4096;

export const generate: Command = {
  name: 'generate',
  summary: 'write new IDs to stdout, one per line',
  help: `Usage: ids generate [-n N] [--layout SPEC] [--machine-id N] [--format NAME]

Writes N new IDs to stdout, one per line, in increasing order. With N of ${PROGRESS_MIN.toLocaleString('en-US')} or more
and stderr on a terminal, a progress bar is drawn on stderr.

Options:
  -n, --count N         how many IDs (default 1, at most ${MAX_COUNT.toLocaleString('en-US')})
${LAYOUT_HELP}
                        (default sonyflake)
  -m, --machine-id N    the machine ID; else IDS_MACHINE_ID, else the auto chain
                        (ids machine-id --explain shows the choice)
${FORMAT_HELP}
                        (default decimal)
      --no-progress     never draw the progress bar
${SCHEME_HELP}
  -h, --help            this text

${EXIT_HELP}
`,
  async run(args, io) {
    const { values } = parseCommandLine(() =>
      parseArgs({
        args,
        options: {
          count: { type: 'string', short: 'n' },
          layout: OPTIONS.layout,
          'machine-id': OPTIONS['machine-id'],
          format: OPTIONS.format,
          'no-progress': { type: 'boolean' },
          ...SCHEME_OPTIONS,
        },
        allowPositionals: false,
        strict: true,
      }),
    );
    const count = parseCount(values.count ?? '1', '--count', 1, MAX_COUNT);
    if (values.scheme !== undefined || values.store !== undefined || values.tag !== undefined) {
      return generateScheme(values, count, io);
    }
    const { layout, generator: build } = parseLayout(values.layout ?? 'sonyflake');
    const encoding = ENCODINGS[parseFormat(values.format ?? 'decimal')];
    const { machineId: source } = await machineIdFor(layout, values['machine-id'], io);

    const out = io.stdout;
    // A reader that goes away (`ids generate -n 1e9 | head`) ends the run quietly; other write
    // errors fail it.
    let broken: Error | undefined;
    let closed = false;
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') closed = true;
      else broken = error;
    };
    out.on('error', onError);
    const generator = build(source);
    const progress = progressBar(count, io.stderr, { enabled: !values['no-progress'] });
    try {
      for (let done = 0; done < count && !closed; ) {
        if (broken) throw broken;
        const ids = await generator.nextIds(Math.min(BATCH, count - done));
        let text = '';
        for (const id of ids) text += `${encoding.encode(id)}\n`;
        if (!out.write(text)) await drained(out);
        done += ids.length;
        progress.update(done);
      }
      if (broken) throw broken;
    } finally {
      progress.finish();
      out.off('error', onError);
      await generator.close();
    }
    return 0;
  },
};
