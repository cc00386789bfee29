import { parseArgs } from 'node:util';
import {
  type DecomposedId,
  decodeAnyId,
  decodeId,
  decompose as decomposeId,
  type Layout,
  toTime,
} from '@ids/engine';
import { parseCommandLine } from '../args.js';
import { type Command, EXIT_HELP, FORMAT_HELP, LAYOUT_HELP, OPTIONS, parseFormat } from '../command.js';
import { UsageError } from '../errors.js';
import { print, readAll } from '../io.js';
import { parseLayout } from '../layouts.js';
import { noteGuessedEncoding, warnImplausibleTime } from '../plausible.js';
import { columns } from '../table.js';

interface Decomposed extends DecomposedId {
  readonly input: string;
  readonly encoding: string;
  readonly layout: string;
  readonly timeIso: string;
}

export function describeLayout(layout: Layout): string {
  const parts = layout.machineParts
    ? ` (${layout.machineParts.map((p) => `${p.name} ${p.bits}`).join(' + ')})`
    : '';
  const fields =
    layout.fieldOrder === 'sequence-machine'
      ? `sequence ${layout.sequenceBits}, machine ${layout.machineBits}${parts}`
      : `machine ${layout.machineBits}${parts}, sequence ${layout.sequenceBits}`;
  return `${layout.timeBits}-bit time in ${layout.timeUnitMs} ms units, ${fields}; epoch ${new Date(layout.epochMs).toISOString()}`;
}

export const decompose: Command = {
  name: 'decompose',
  summary: 'take IDs apart: time, sequence, machine',
  help: `Usage: ids decompose [--layout SPEC] [--format NAME] [--json] ID...

Prints the fields of each ID: the time (start of its tick) as an ISO date, the sequence, the
machine ID and its parts, and the layout used. IDs come from the arguments, or one per line from
stdin when there are none. Without --format the encoding is recognised: digits are decimal;
other text must read as one ID in exactly one encoding (an ambiguous one names the encodings that
read it; a guessed one is noted on stderr). Without --layout, an ID dated in the future is warned
about on stderr, naming the layouts that date it in the past.

Options:
${LAYOUT_HELP}
                        (default sonyflake)
${FORMAT_HELP}
      --json            print a JSON array, IDs as decimal strings
  -h, --help            this text

${EXIT_HELP}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(() =>
      parseArgs({
        args,
        options: {
          layout: OPTIONS.layout,
          format: OPTIONS.format,
          json: OPTIONS.json,
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    const { label, layout } = parseLayout(values.layout ?? 'sonyflake');
    const format = values.format === undefined ? undefined : parseFormat(values.format);
    let inputs = positionals;
    if (inputs.length === 0 && io.stdin && !io.stdin.isTTY) {
      inputs = (await readAll(io.stdin)).split(/\s+/).filter(Boolean);
    }
    if (inputs.length === 0) throw new UsageError('expected at least one ID, as arguments or on stdin');

    const rows: Decomposed[] = inputs.map((input) => {
      const { id, encoding } = format
        ? { id: decodeId(input, format), encoding: format }
        : decodeAnyId(input);
      const fields = decomposeId(layout, id);
      if (!format) noteGuessedEncoding(io, input, encoding);
      if (values.layout === undefined) warnImplausibleTime(io, input, id, layout, label);
      return { input, encoding, layout: label, ...fields, timeIso: toTime(layout, id).toISOString() };
    });

    if (values.json) {
      const json = rows.map((r) => ({
        input: r.input,
        encoding: r.encoding,
        id: r.id.toString(),
        layout: r.layout,
        time: r.timeIso,
        tick: r.time,
        sequence: r.sequence,
        machine: r.machine,
        ...(r.parts ? { parts: r.parts } : {}),
      }));
      await print(io.stdout, `${JSON.stringify(json, null, 2)}\n`);
      return 0;
    }
    const text = rows
      .map((r) => {
        const parts = r.parts
          ? ` (${Object.entries(r.parts)
              .map(([name, value]) => `${name} ${value}`)
              .join(', ')})`
          : '';
        return columns([
          ['id', r.id.toString()],
          ['read as', r.encoding === 'decimal' ? 'decimal' : `${r.encoding} ${JSON.stringify(r.input)}`],
          ['layout', `${r.layout}: ${describeLayout(layout)}`],
          ['time', `${r.timeIso} (tick ${r.time})`],
          ['sequence', String(r.sequence)],
          ['machine', `${r.machine}${parts}`],
        ]);
      })
      .join('\n');
    await print(io.stdout, text);
    return 0;
  },
};
