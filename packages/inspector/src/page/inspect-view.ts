// The inspector: each pasted ID as 64 bits grouped by field, its decoded values, and a warning
// when the chosen layout reads it implausibly.
import { encodeId } from '@ids/engine';
import { byId, h, int, iso, replace } from './dom.js';
import { bitString, type Field, fieldsOf, fieldValue } from './fields.js';
import { plausibleReadings, type Reading, readAll } from './layout-reading.js';
import type { PageLayout } from './layouts.js';
import { type Item, MAX_SHOWN, type Parsed } from './parse-input.js';

/** The 64 bits of `id`, grouped by the fields of `layout`, each group named. */
export function bitStrip(id: bigint, named: PageLayout): HTMLElement {
  const bits = bitString(id);
  const fields = fieldsOf(named.layout);
  return h(
    'div',
    { class: 'strip', role: 'group', 'aria-label': `the 64 bits as ${named.label} reads them` },
    ...fields.map((field) => fieldBits(field, bits, id)),
  );
}

function fieldBits(field: Field, bits: string, id: bigint): HTMLElement {
  const text = bits.slice(63 - (field.low + field.bits - 1), 64 - field.low);
  const cells = h('span', { class: 'bits', 'aria-hidden': 'true' });
  for (const bit of text) cells.appendChild(h('span', { class: `b b${bit}` }, bit));
  const label = `${field.name} ${field.bits}`;
  return h(
    'span',
    {
      class: `field k-${field.kind}`,
      'data-field': field.name,
      title: `${field.name}: ${field.bits} bit${field.bits === 1 ? '' : 's'}, bits ${field.low + field.bits - 1}..${field.low}, value ${fieldValue(id, field)}`,
    },
    h('span', { class: 'fname' }, label),
    cells,
    h('span', { class: 'sr' }, `: ${text}`),
  );
}

function values(reading: Reading): HTMLElement {
  const { fields, startMs, named } = reading;
  if (!fields || startMs === undefined) return h('p', {}, 'No fields: the ID does not fit this layout.');
  const unit = named.layout.timeUnitMs;
  const rows: [string, Node | string][] = [
    [
      'time',
      `${int(fields.time)} tick${fields.time === 1 ? '' : 's'} of ${unit} ms since ${iso(named.layout.epochMs)}`,
    ],
    ['tick start', h('time', { datetime: iso(startMs), class: 'start' }, iso(startMs))],
    ['sequence', int(fields.sequence)],
    ['machine', `${int(fields.machine)} (0x${fields.machine.toString(16)})`],
  ];
  for (const [name, value] of Object.entries(fields.parts ?? {}))
    rows.push([`machine · ${name}`, int(value)]);
  return h(
    'dl',
    { class: 'values' },
    ...rows.flatMap(([name, value]) => [h('dt', {}, name), h('dd', { 'data-value': name }, value)]),
  );
}

/** "Twitter (2012-…), Discord (2016-…)": plausible readings with the time each gives. */
function listed(readings: readonly Reading[]): string {
  return readings
    .map((r) => `${r.named.label} (${r.startMs === undefined ? '' : iso(r.startMs)})`)
    .join(', ');
}

function warning(reading: Reading, plausible: readonly Reading[]): HTMLElement | undefined {
  if (reading.problem === undefined) return undefined;
  const others =
    plausible.length === 0
      ? 'No layout on this page reads it plausibly.'
      : `It reads plausibly as ${listed(plausible)}.`;
  return h(
    'p',
    { class: 'warning', role: 'note' },
    h('strong', {}, `Implausible as ${reading.named.label}: `),
    `${reading.problem}. ${others}`,
  );
}

/** Which reading the card shows and why; the other layouts that read the ID plausibly. */
function pick(
  item: Extract<Item, { id: bigint }>,
  reading: Reading,
  plausible: readonly Reading[],
): HTMLElement {
  const also =
    reading.problem !== undefined
      ? '' // The warning names them.
      : plausible.length === 0
        ? ' No other layout on this page reads it plausibly.'
        : ` Also plausible: ${listed(plausible)}; an ID does not say which layout made it, so choose the one it came from.`;
  return h(
    'p',
    {
      class: 'pick',
      'data-layout': reading.named.name,
      'data-plausible': plausible.map((r) => r.named.name).join(' '),
    },
    `Read as ${item.encoding} (${item.why}) in the ${reading.named.label} layout, the one selected above.${also}`,
  );
}

/** The readings of text that is not an ID until its encoding is chosen, each with its plausible layouts. */
function candidates(
  item: Extract<Item, { error: string }>,
  all: readonly PageLayout[],
  nowMs: number,
): HTMLElement | undefined {
  if (item.candidates.length === 0) return undefined;
  return h(
    'ul',
    { class: 'readings' },
    ...item.candidates.map(({ encoding, id }) => {
      const plausible = plausibleReadings(id, all, nowMs);
      const where =
        plausible.length === 0 ? 'plausible in no layout here' : `plausible as ${listed(plausible)}`;
      return h('li', { 'data-encoding': encoding }, `As ${encoding}: ${id}, ${where}.`);
    }),
  );
}

function card(item: Item, index: number, chosen: PageLayout, all: readonly PageLayout[], nowMs: number) {
  const title = `id-${index}`;
  if (!('id' in item)) {
    const choose =
      item.candidates.length === 0
        ? undefined
        : h(
            'p',
            { class: 'hint' },
            `Not counted as an ID: choose ${item.candidates.map((c) => c.encoding).join(' or ')} as the encoding to read it.`,
          );
    return h(
      'article',
      { class: 'card bad', 'aria-labelledby': title },
      h('h2', { id: title, class: 'card-title' }, `Line ${item.line}: `, h('code', {}, short(item.text))),
      h('p', { class: 'error' }, item.error),
      candidates(item, all, nowMs),
      choose,
    );
  }
  const { chosen: reading, plausible } = readAll(item.id, chosen, all, nowMs);
  const decimal = item.id.toString();
  const read = item.encoding === 'decimal' ? '' : ` · ${item.encoding} for ${decimal}`;
  return h(
    'article',
    { class: 'card', 'aria-labelledby': title, 'data-id': decimal },
    h(
      'h2',
      { id: title, class: 'card-title' },
      h('code', {}, short(item.text)),
      h('span', { class: 'enc' }, read),
    ),
    bitStrip(item.id, chosen),
    pick(item, reading, plausible),
    warning(reading, plausible),
    values(reading),
    h('p', { class: 'forms' }, `hex ${encodeId(item.id, 'hex')} · base36 ${encodeId(item.id, 'base36')}`),
  );
}

function short(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The message beside the input: how many IDs were read, what was not read, and what was left out. */
export function inputMessage(parsed: Parsed): string {
  if (parsed.total === 0) return 'Paste one or more IDs: decimal, hex, base32, base58 or base36.';
  const read = parsed.items.filter((item) => 'id' in item).length;
  const bad = parsed.items.filter((item) => !('id' in item));
  const parts = [`${int(read)} ID${read === 1 ? '' : 's'} read.`];
  if (bad.length > 0) {
    const first = bad[0]!;
    const more = bad.length > 1 ? ` (and ${bad.length - 1} more below)` : '';
    parts.push(`Line ${first.line}: ${'error' in first ? first.error : ''}${more}.`);
  }
  if (parsed.total > MAX_SHOWN) {
    parts.push(`${int(parsed.total)} pasted: only the first ${MAX_SHOWN} are read and shown.`);
  }
  return parts.join(' ');
}

/**
 * IDs to try on an empty page, each in the layout it came from: a Sonyflake ID (tick 29463504567
 * of 10 ms, 2024-01-02T03:04:05.670Z, sequence 5, machine 0x1234) and a tweet's ID (2022-10-28,
 * datacenter 10, worker 10). Read as Sonyflake, the second shows the warning naming Twitter.
 */
export const EXAMPLE_IDS = [
  { id: '494315580237877812', what: 'a Sonyflake ID' },
  { id: '1585841080431321088', what: 'a Twitter ID' },
] as const;

/** What the results show before anything is pasted: example IDs, each a button that inspects it. */
function emptyState(): HTMLElement {
  return h(
    'p',
    { class: 'examples' },
    'Nothing pasted yet. Try an example: ',
    ...EXAMPLE_IDS.flatMap(({ id, what }, i) => [
      i > 0 ? ' or ' : '',
      h(
        'button',
        { type: 'button', class: 'example', 'data-example': id, 'aria-label': `${what}, ${id}` },
        id,
      ),
      ` (${what.replace(/^an? /, '')})`,
    ]),
  );
}

/** Draws the results of one parse. */
export function renderInspect(
  parsed: Parsed,
  chosen: PageLayout,
  all: readonly PageLayout[],
  nowMs: number,
): void {
  const message = byId('input-message');
  message.textContent = inputMessage(parsed);
  message.classList.toggle(
    'has-error',
    parsed.items.some((item) => !('id' in item)) || parsed.total > MAX_SHOWN,
  );
  if (parsed.total === 0) replace(byId('results'), emptyState());
  else replace(byId('results'), ...parsed.items.map((item, i) => card(item, i, chosen, all, nowMs)));
}
