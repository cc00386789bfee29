// The layouts side by side: a bar of 64 bits per layout, to scale; each lifetime on one time
// axis with today marked; IDs per second and machines on log axes; and the figures as a table.
import { type LayoutLimits, layoutLimits } from '@ids/engine';
import { byId, h, int, iso, replace } from './dom.js';
import { fieldsOf } from './fields.js';
import type { PageLayout } from './layouts.js';
import { logAxis, logPercent, powerLabel, timeAxis, timePercent, years } from './scale.js';

interface Row {
  readonly named: PageLayout;
  readonly limits: LayoutLimits;
}

const day = (ms: number) => iso(ms).slice(0, 10);
/** A tick label's place on its axis; --at lets a narrow screen keep the end labels inside it. */
const at = (percent: number) => `left:${percent}%;--at:${percent}%`;

function bitBars(rows: readonly Row[]): HTMLElement {
  return h(
    'div',
    { class: 'chart' },
    ...rows.map(({ named }) => {
      const fields = fieldsOf(named.layout);
      const legend = fields.map((f) => `${f.name} ${f.bits}`).join(' · ');
      return h(
        'div',
        { class: 'row', 'data-layout': named.name },
        h('span', { class: 'rname' }, named.label),
        h(
          'span',
          { class: 'bar', role: 'img', 'aria-label': `${named.label}: ${legend}` },
          ...fields.map((f) =>
            h(
              'span',
              {
                class: `seg k-${f.kind}`,
                style: `width:${(f.bits / 64) * 100}%`,
                title: `${f.name}: ${f.bits} bits`,
              },
              h('span', {
                class: 'seg-label',
                'data-full': `${f.name} ${f.bits}`,
                'data-short': String(f.bits),
              }),
            ),
          ),
        ),
        h('span', { class: 'legend' }, legend),
      );
    }),
  );
}

function lifetimes(rows: readonly Row[], nowMs: number): HTMLElement {
  const spans = rows.map(({ named, limits }) => ({
    startMs: named.layout.epochMs,
    endMs: limits.endsAt.getTime(),
  }));
  const axis = timeAxis(spans, nowMs);
  const today = timePercent(axis, nowMs);
  return h(
    'div',
    { class: 'chart timeline' },
    ...rows.map(({ named, limits }, i) => {
      const span = spans[i]!;
      const left = timePercent(axis, span.startMs);
      const right = timePercent(axis, span.endMs);
      const beyond = span.endMs > axis.endMs;
      const text = `${day(span.startMs)} → ${day(span.endMs)}${beyond ? ' (beyond the axis)' : ''}, ${years(limits.lifetimeMs)}`;
      return h(
        'div',
        { class: 'row', 'data-layout': named.name },
        h('span', { class: 'rname' }, named.label),
        h(
          'span',
          { class: 'track' },
          h('span', {
            class: `life${beyond ? ' open' : ''}`,
            style: `left:${left}%;width:${Math.max(0.5, right - left)}%`,
          }),
          h('span', { class: 'today', style: `left:${today}%`, 'aria-hidden': 'true' }),
        ),
        h('span', { class: 'legend', 'data-end': day(span.endMs) }, text),
      );
    }),
    h(
      'div',
      { class: 'row axis', 'aria-hidden': 'true' },
      h('span', { class: 'rname' }),
      h(
        'span',
        { class: 'track' },
        ...axis.ticks.map((t) => h('span', { class: 'tick', style: at(timePercent(axis, t.ms)) }, t.label)),
        h('span', { class: 'tick now', style: at(today) }, `today ${day(nowMs)}`),
      ),
      h('span', { class: 'legend' }),
    ),
  );
}

function logBars(rows: readonly Row[], value: (limits: LayoutLimits) => number, unit: string): HTMLElement {
  const axis = logAxis(rows.map((r) => value(r.limits)));
  const ticks = Array.from({ length: axis.decades + 1 }, (_, e) => e);
  return h(
    'div',
    { class: 'chart log' },
    ...rows.map(({ named, limits }) =>
      h(
        'div',
        { class: 'row', 'data-layout': named.name },
        h('span', { class: 'rname' }, named.label),
        h(
          'span',
          { class: 'track' },
          h('span', { class: 'amount', style: `width:${logPercent(axis, value(limits))}%` }),
        ),
        h('span', { class: 'legend' }, `${int(value(limits))}${unit}`),
      ),
    ),
    h(
      'div',
      { class: 'row axis', 'aria-hidden': 'true' },
      h('span', { class: 'rname' }),
      h(
        'span',
        { class: 'track' },
        ...ticks.map((e) => h('span', { class: 'tick', style: at((e / axis.decades) * 100) }, powerLabel(e))),
      ),
      h('span', { class: 'legend' }),
    ),
  );
}

function figures(rows: readonly Row[]): HTMLElement {
  const head = [
    'layout',
    'time',
    'sequence',
    'machine',
    'epoch',
    'ends',
    'lifetime',
    'IDs/s per machine',
    'machines',
  ];
  return h(
    'table',
    { class: 'figures' },
    h('caption', {}, 'The figures behind the charts'),
    h('thead', {}, h('tr', {}, ...head.map((name) => h('th', { scope: 'col' }, name)))),
    h(
      'tbody',
      {},
      ...rows.map(({ named, limits }) => {
        const { layout } = named;
        const parts = layout.machineParts?.map((p) => `${p.name} ${p.bits}`).join(' + ');
        return h(
          'tr',
          { 'data-layout': named.name },
          h('th', { scope: 'row' }, named.label),
          h('td', {}, `${layout.timeBits} bits of ${layout.timeUnitMs} ms`),
          h('td', {}, `${layout.sequenceBits} bits`),
          h('td', {}, `${layout.machineBits} bits${parts ? ` (${parts})` : ''}`),
          h('td', { class: 'date' }, day(layout.epochMs)),
          h('td', { 'data-end': day(limits.endsAt.getTime()) }, iso(limits.endsAt.getTime())),
          h('td', {}, years(limits.lifetimeMs)),
          h('td', {}, int(limits.idsPerSecond)),
          h('td', {}, int(limits.machines)),
        );
      }),
    ),
  );
}

/**
 * Gives each bit-bar segment the longest label that fits it: "sequence 8", else "8", else none
 * (its title and the legend beside the bar name every field). A segment is as wide as its bits,
 * so on a narrow screen a name would otherwise be cut off mid-word. Measured on screen: a hidden
 * view has no widths, so this runs when the comparison is shown and when the window resizes.
 */
export function fitBarLabels(): void {
  if (byId('compare').hidden) return;
  for (const label of byId('bars').querySelectorAll<HTMLElement>('.seg-label')) {
    const seg = label.parentElement!;
    for (const text of [label.dataset.full!, label.dataset.short!, '']) {
      label.textContent = text;
      if (label.scrollWidth <= seg.clientWidth) break;
    }
  }
}

/** Draws the comparison of `layouts` as of `nowMs`. */
export function renderCompare(layouts: readonly PageLayout[], nowMs: number): void {
  const rows = layouts.map((named) => ({ named, limits: layoutLimits(named.layout) }));
  replace(byId('bars'), bitBars(rows));
  replace(byId('lifetimes'), lifetimes(rows, nowMs));
  replace(
    byId('rates'),
    logBars(rows, (l) => l.idsPerSecond, ' IDs/s'),
  );
  replace(
    byId('machines'),
    logBars(rows, (l) => l.machines, ' machines'),
  );
  replace(byId('figures'), figures(rows));
}
