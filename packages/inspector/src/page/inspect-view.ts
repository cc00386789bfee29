// The inspector: each pasted ID as 64 bits grouped by field, its decoded values, and a warning
// when the chosen layout reads it implausibly.
import { encodeId } from '@ids/engine';
import { byId, h, int, replace } from './dom.js';
import { bitString, type Field, fieldsOf, fieldValue } from './fields.js';
import type { NamedLayout } from './layouts.js';
import { type Item, MAX_SHOWN, type Parsed } from './read.js';
import { iso, type Reading, readAll } from './reading.js';

/** The 64 bits of `id`, grouped by the fields of `layout`, each group named. */
export function bitStrip(id: bigint, named: NamedLayout): HTMLElement {
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

function warning(reading: Reading, plausible: readonly Reading[]): HTMLElement | undefined {
  if (reading.problem === undefined) return undefined;
  const others =
    plausible.length === 0
      ? 'No layout on this page reads it plausibly.'
      : `It reads plausibly as ${plausible
          .map((r) => `${r.named.label} (${r.startMs === undefined ? '' : iso(r.startMs)})`)
          .join(', ')}.`;
  return h(
    'p',
    { class: 'warning', role: 'note' },
    h('strong', {}, `Implausible as ${reading.named.label}: `),
    `${reading.problem}. ${others}`,
  );
}

function card(item: Item, index: number, chosen: NamedLayout, all: readonly NamedLayout[], nowMs: number) {
  const title = `id-${index}`;
  if (!('id' in item)) {
    return h(
      'article',
      { class: 'card bad', 'aria-labelledby': title },
      h('h2', { id: title, class: 'card-title' }, `Line ${item.line}: `, h('code', {}, short(item.text))),
      h('p', { class: 'error' }, item.error),
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
    warning(reading, plausible),
    values(reading),
    h('p', { class: 'forms' }, `hex ${encodeId(item.id, 'hex')} · base36 ${encodeId(item.id, 'base36')}`),
  );
}

function short(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The message beside the input: what was not read, and what was left out. */
export function inputMessage(parsed: Parsed): string {
  const bad = parsed.items.filter((item) => !('id' in item));
  const parts: string[] = [];
  if (parsed.total === 0) return 'Paste one or more IDs: decimal, hex, base32, base58 or base36.';
  if (bad.length > 0) {
    const first = bad[0]!;
    const more = bad.length > 1 ? ` (and ${bad.length - 1} more below)` : '';
    parts.push(`Line ${first.line}: ${'error' in first ? first.error : ''}${more}.`);
  }
  if (parsed.total > MAX_SHOWN) {
    parts.push(`${int(parsed.total)} IDs pasted: showing the first ${MAX_SHOWN}.`);
  }
  if (parts.length === 0) {
    return `${parsed.total} ID${parsed.total === 1 ? '' : 's'} read.`;
  }
  return parts.join(' ');
}

/** Draws the results of one parse. */
export function renderInspect(
  parsed: Parsed,
  chosen: NamedLayout,
  all: readonly NamedLayout[],
  nowMs: number,
): void {
  const message = byId('input-message');
  message.textContent = inputMessage(parsed);
  message.classList.toggle(
    'has-error',
    parsed.items.some((item) => !('id' in item)) || parsed.total > MAX_SHOWN,
  );
  replace(byId('results'), ...parsed.items.map((item, i) => card(item, i, chosen, all, nowMs)));
}
