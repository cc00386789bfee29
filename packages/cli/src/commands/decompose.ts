import { type DecomposedId, decomposeIn as decomposeId, type Layout, toTimeIn as toTime } from '@ids/engine';
import { type Command, defineCommand, type Flags, OPTIONS, parseFormat } from '../command.js';
import { UsageError } from '../errors.js';
import { print, readLineBatches } from '../io.js';
import { parseLayout } from '../layouts.js';
import { layoutNotes, readIdText } from '../plausible.js';
import { columns, partsSuffix } from '../table.js';

interface Decomposed extends DecomposedId {
  readonly input: string;
  readonly encoding: string;
  /** Why that encoding, when it was neither decimal nor given with --format. */
  readonly why: string | undefined;
  readonly layout: string;
  readonly timeIso: string;
}

export function describeLayout(layout: Layout): string {
  const parts = partsSuffix(layout.machineParts);
  const fields =
    layout.fieldOrder === 'sequence-machine'
      ? `sequence ${layout.sequenceBits}, machine ${layout.machineBits}${parts}`
      : `machine ${layout.machineBits}${parts}, sequence ${layout.sequenceBits}`;
  return `${layout.timeBits}-bit time in ${layout.timeUnitMs} ms units, ${fields}; epoch ${new Date(layout.epochMs).toISOString()}`;
}

/** One element of the --json array, indented as JSON.stringify(array, null, 2) would. */
function jsonItem(r: Decomposed): string {
  const item = {
    input: r.input,
    encoding: r.encoding,
    id: r.id.toString(),
    layout: r.layout,
    time: r.timeIso,
    tick: r.time,
    sequence: r.sequence,
    machine: r.machine,
    ...(r.parts ? { parts: r.parts } : {}),
  };
  return JSON.stringify(item, null, 2).replace(/^/gm, '  ');
}

function textItem(r: Decomposed, layout: Layout): string {
  const parts = r.parts
    ? ` (${Object.entries(r.parts)
        .map(([name, value]) => `${name} ${value}`)
        .join(', ')})`
    : '';
  return columns([
    ['id', r.id.toString()],
    [
      'read as',
      r.encoding === 'decimal'
        ? 'decimal'
        : `${r.encoding} ${JSON.stringify(r.input)}${r.why === undefined ? '' : ` (${r.why})`}`,
    ],
    ['layout', `${r.layout}: ${describeLayout(layout)}`],
    ['time', `${r.timeIso} (tick ${r.time})`],
    ['sequence', String(r.sequence)],
    ['machine', `${r.machine}${parts}`],
  ]);
}

const FLAGS = {
  layout: OPTIONS.layout,
  format: { ...OPTIONS.format, byDefault: 'recognised from the text' },
  json: { ...OPTIONS.json, help: 'print a JSON array, IDs as decimal strings' },
} as const satisfies Flags;

export const decompose: Command = defineCommand({
  name: 'decompose',
  summary: 'take IDs apart: time, sequence, machine',
  flags: FLAGS,
  usage: `Usage: ids decompose [--layout SPEC] [--format NAME] [--json] ID...

Prints the fields of each ID: the time (start of its tick) as an ISO date, the sequence, the
machine ID and its parts, and the layout used. IDs come from the arguments, or one per line from
stdin when there are none. Without --format only text whose form leaves no doubt is read:
digits (decimal), 16 hex digits, 13 Crockford base32 characters that no other encoding reads;
anything else (a word reads as base36 too) is refused with every reading listed. Without
--layout, an ID is read as sonyflake and stderr names the other layouts that date it plausibly
(at least a day after their epoch and at most a minute from now), or warns when sonyflake does
not.`,
  positionals: true,
  async run({ values, positionals }, io) {
    const { label, layout } = parseLayout(values.layout ?? FLAGS.layout.byDefault);
    const format = values.format === undefined ? undefined : parseFormat(values.format);
    // Read per ID: a stream of stdin can outlast the minute of slack the date rule allows.
    const now = io.now ?? Date.now;
    const note = values.layout === undefined ? layoutNotes(io, label, layout) : undefined;
    const row = (input: string): Decomposed => {
      const read = readIdText(input, format, now());
      const fields = decomposeId(layout, read.id);
      note?.(input, read.id, now());
      const why = format || read.encoding === 'decimal' ? undefined : read.why;
      return {
        input,
        encoding: read.encoding,
        why,
        layout: label,
        ...fields,
        timeIso: toTime(layout, read.id).toISOString(),
      };
    };
    // Each ID is printed as soon as it is read: stdin is streamed line by line, never held whole.
    let count = 0;
    let pending = '';
    const flush = async () => {
      const text = pending;
      pending = '';
      if (text !== '') await print(io.stdout, text);
    };
    const emit = async (r: Decomposed) => {
      const text = values.json ? jsonItem(r) : textItem(r, layout);
      pending += (count === 0 ? (values.json ? '[\n' : '') : values.json ? ',\n' : '\n') + text;
      count++;
      // Written in chunks: one write per ID would cost more than decoding it.
      if (pending.length >= 64 * 1024) await flush();
    };
    if (positionals.length > 0) {
      // Arguments are few: all are read before any is printed, so a bad one prints nothing.
      for (const r of positionals.map(row)) await emit(r);
    } else if (io.stdin && !io.stdin.isTTY) {
      for await (const lines of readLineBatches(io.stdin)) {
        for (const line of lines) {
          for (const input of line.split(/\s+/)) if (input !== '') await emit(row(input));
        }
        await flush(); // What came in is answered before waiting for more.
      }
    }
    if (count === 0) throw new UsageError('expected at least one ID, as arguments or on stdin');
    if (values.json) pending += '\n]\n';
    await flush();
    return 0;
  },
});
