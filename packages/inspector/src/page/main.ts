// The page's entry: wires the controls to the two views and redraws on every change. Work per
// change is bounded (see read.ts), so typing or pasting never freezes the page.
import { renderCompare } from './compare-view.js';
import { fillCustomForm, readCustomForm } from './custom.js';
import { byId } from './dom.js';
import { renderInspect } from './inspect-view.js';
import { BUILT_IN, type NamedLayout } from './layouts.js';
import { ENCODING_CHOICES, parseInput } from './read.js';

let custom: NamedLayout | undefined;

function layouts(): NamedLayout[] {
  return custom ? [...BUILT_IN, custom] : [...BUILT_IN];
}

const input = byId<HTMLTextAreaElement>('ids');
const layoutSelect = byId<HTMLSelectElement>('layout');
const encodingSelect = byId<HTMLSelectElement>('encoding');

for (const named of [...BUILT_IN, { key: 'custom', label: 'Custom (set below)' }]) {
  layoutSelect.add(new Option(named.label, named.key));
}
for (const name of ENCODING_CHOICES) {
  encodingSelect.add(new Option(name === 'auto' ? 'detect' : name, name));
}

function inspect(): void {
  const all = layouts();
  const chosen = all.find((l) => l.key === layoutSelect.value) ?? BUILT_IN[0]!;
  const encoding = encodingSelect.value as (typeof ENCODING_CHOICES)[number];
  renderInspect(parseInput(input.value, encoding), chosen, all, Date.now());
}

function updateCustom(): void {
  const result = readCustomForm();
  const message = byId('custom-message');
  if ('error' in result) {
    custom = undefined;
    message.textContent = `Not a layout: ${result.error}`;
    message.classList.add('has-error');
  } else {
    custom = result.layout;
    const { timeBits, sequenceBits, machineBits } = custom.layout;
    message.textContent = `Uses ${timeBits + sequenceBits + machineBits} of 63 bits.`;
    message.classList.remove('has-error');
  }
  const option = layoutSelect.querySelector<HTMLOptionElement>('option[value="custom"]');
  if (option) option.disabled = custom === undefined;
  if (custom === undefined && layoutSelect.value === 'custom') layoutSelect.value = BUILT_IN[0]!.key;
  renderCompare(layouts(), Date.now());
  inspect();
}

// Typing redraws after a short pause rather than on every key: a paste is one input event anyway.
let pending: ReturnType<typeof setTimeout> | undefined;
input.addEventListener('input', () => {
  clearTimeout(pending);
  pending = setTimeout(inspect, 120);
});
layoutSelect.addEventListener('change', inspect);
encodingSelect.addEventListener('change', inspect);
byId('inspect-form').addEventListener('submit', (event) => {
  event.preventDefault();
  clearTimeout(pending);
  inspect();
});
byId('custom').addEventListener('input', updateCustom);

// Tabs: arrow keys move between them (the WAI-ARIA tabs pattern); the hash keeps the view.
const tabs = [byId<HTMLButtonElement>('tab-inspect'), byId<HTMLButtonElement>('tab-compare')];

function select(tab: HTMLButtonElement, focus: boolean): void {
  for (const t of tabs) {
    const selected = t === tab;
    t.setAttribute('aria-selected', String(selected));
    t.tabIndex = selected ? 0 : -1;
    byId(t.getAttribute('aria-controls')!).hidden = !selected;
  }
  if (focus) tab.focus();
  try {
    history.replaceState(null, '', `#${tab.getAttribute('aria-controls')}`);
  } catch {
    // Some embeddings (sandboxed frames, data: URLs) refuse history changes; the view still switches.
  }
}

tabs.forEach((tab, i) => {
  tab.addEventListener('click', () => select(tab, false));
  tab.addEventListener('keydown', (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1, Home: -i, End: tabs.length - 1 - i }[event.key];
    if (step === undefined) return;
    event.preventDefault();
    select(tabs[(i + step + tabs.length) % tabs.length]!, true);
  });
});

fillCustomForm();
updateCustom();
select(location.hash === '#compare' ? tabs[1]! : tabs[0]!, false);
document.documentElement.dataset.ready = 'true';
