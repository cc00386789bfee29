// The custom-bits form: its fields become a LayoutSpec, checked by the engine's defineLayout, so
// the page accepts exactly the layouts the library does and shows the library's message.
import { type FieldOrder, IdsError, type LayoutSpec } from '@ids/engine';
import { byId, iso } from './dom.js';
import { customLayout, DEFAULT_CUSTOM, type PageLayout } from './layouts.js';

const NUMBERS = [
  ['custom-time', 'timeBits', 'time bits'],
  ['custom-unit', 'timeUnitMs', 'time unit'],
  ['custom-sequence', 'sequenceBits', 'sequence bits'],
  ['custom-machine', 'machineBits', 'machine bits'],
] as const;

/** Puts the default custom layout into the form. */
export function fillCustomForm(): void {
  for (const [id, key] of NUMBERS) byId<HTMLInputElement>(id).value = String(DEFAULT_CUSTOM[key]);
  byId<HTMLSelectElement>('custom-order').value = DEFAULT_CUSTOM.fieldOrder ?? 'sequence-machine';
  byId<HTMLInputElement>('custom-epoch').value = iso(DEFAULT_CUSTOM.epochMs).slice(0, 10);
}

/** The layout the form describes, or the reason it describes none. */
export function readCustomForm(): { layout: PageLayout } | { error: string } {
  const spec: Record<string, number | string> = { name: 'custom' };
  for (const [id, key, label] of NUMBERS) {
    const text = byId<HTMLInputElement>(id).value.trim();
    if (!/^[0-9]{1,6}$/.test(text)) {
      return { error: `${label}: expected a whole number, received ${JSON.stringify(text)}` };
    }
    spec[key] = Number(text);
  }
  const epoch = byId<HTMLInputElement>('custom-epoch').value;
  const epochMs = /^\d{4}-\d\d-\d\d$/.test(epoch) ? Date.parse(`${epoch}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(epochMs)) return { error: `epoch: expected a date, received ${JSON.stringify(epoch)}` };
  spec.epochMs = epochMs;
  spec.fieldOrder = byId<HTMLSelectElement>('custom-order').value as FieldOrder;
  try {
    return { layout: customLayout(spec as unknown as LayoutSpec) };
  } catch (error) {
    return { error: error instanceof IdsError ? error.message : String(error) };
  }
}
