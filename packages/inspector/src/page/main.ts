// The page's entry: wires the controls to the two views and redraws on every change. Work per
// change is bounded (see parse-input.ts), so typing or pasting never freezes the page.
import { fitBarLabels, renderCompare } from './compare-view.js';
import { fillCustomForm, readCustomForm } from './custom.js';
import { byId } from './dom.js';
import { renderInspect } from './inspect-view.js';
import { BUILT_IN, type PageLayout } from './layouts.js';
import { ENCODING_CHOICES, parseInput } from './parse-input.js';

let custom: PageLayout | undefined;

function layouts(): PageLayout[] {
  return custom ? [...BUILT_IN, custom] : [...BUILT_IN];
}

const input = byId<HTMLTextAreaElement>('ids');
const layoutSelect = byId<HTMLSelectElement>('layout');
const encodingSelect = byId<HTMLSelectElement>('encoding');

for (const named of [...BUILT_IN, { name: 'custom', label: 'Custom (set below)' }]) {
  layoutSelect.add(new Option(named.label, named.name));
}
for (const name of ENCODING_CHOICES) {
  encodingSelect.add(new Option(name === 'auto' ? 'detect' : name, name));
}

function inspect(): void {
  const all = layouts();
  const chosen = all.find((l) => l.name === layoutSelect.value) ?? BUILT_IN[0]!;
  const encoding = encodingSelect.value as (typeof ENCODING_CHOICES)[number];
  const start = performance.now();
  renderInspect(parseInput(input.value, encoding), chosen, all, Date.now());
  // How long the page's own work took (read by the browser tests; the textarea's layout of a
  // huge paste is the browser's and comes on top).
  byId('results').dataset.ms = (performance.now() - start).toFixed(1);
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
  if (custom === undefined && layoutSelect.value === 'custom') layoutSelect.value = BUILT_IN[0]!.name;
  drawCompare();
  inspect();
}

// The comparison is drawn when it is on screen (and redrawn on a change while it is), so that
// loading the page draws only the view it opens with.
function drawCompare(): void {
  if (byId('compare').hidden) return;
  renderCompare(layouts(), Date.now());
  fitBarLabels();
}
// A label fits its segment or not depending on the width: measured again when that changes.
addEventListener('resize', fitBarLabels);

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
// An example ID of the empty state goes into the box as if pasted, and is inspected at once.
byId('results').addEventListener('click', (event) => {
  const example = (event.target as Element).closest<HTMLElement>('button[data-example]');
  if (!example) return;
  input.value = example.dataset.example!;
  clearTimeout(pending);
  inspect();
  input.focus();
});

// Tabs: arrow keys move between them (the WAI-ARIA tabs pattern); the hash keeps the view.
const tabs = [byId<HTMLButtonElement>('tab-inspect'), byId<HTMLButtonElement>('tab-compare')];

/** Shows a tab's panel; `user` when a person chose it (only then the hash follows). */
function select(tab: HTMLButtonElement, user: boolean): void {
  for (const t of tabs) {
    const selected = t === tab;
    t.setAttribute('aria-selected', String(selected));
    t.tabIndex = selected ? 0 : -1;
    byId(t.getAttribute('aria-controls')!).hidden = !selected;
  }
  drawCompare();
  fitBarLabels();
  if (!user) return;
  tab.focus();
  // Left alone at load: a new fragment there would move where the first Tab press starts.
  try {
    history.replaceState(null, '', `#${tab.getAttribute('aria-controls')}`);
  } catch {
    // Some embeddings (sandboxed frames, data: URLs) refuse history changes; the view still switches.
  }
}

tabs.forEach((tab, i) => {
  tab.addEventListener('click', () => select(tab, true));
  tab.addEventListener('keydown', (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1, Home: -i, End: tabs.length - 1 - i }[event.key];
    if (step === undefined) return;
    event.preventDefault();
    select(tabs[(i + step + tabs.length) % tabs.length]!, true);
  });
});

const started = performance.now();
fillCustomForm();
select(location.hash === '#compare' ? tabs[1]! : tabs[0]!, false);
updateCustom();
document.documentElement.dataset.ready = 'true';
// How long the first draw took, for the browser tests' report.
document.documentElement.dataset.startMs = (performance.now() - started).toFixed(1);
