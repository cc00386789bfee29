// The layouts the page offers: the engine's table of named layouts (bundled into the page with
// the rest of the engine the page uses), then the custom layout of the form.
import { defineLayout, type LayoutSpec, NAMED_LAYOUTS, type NamedLayout } from '@ids/engine';

/** A layout as the page offers it: its name is the select's value and marks its rows; its label is for people. */
export type PageLayout = Pick<NamedLayout, 'name' | 'label' | 'layout'>;

/** The named layouts, in the order the page lists them. */
export const BUILT_IN: readonly PageLayout[] = Object.values(NAMED_LAYOUTS);

/** What the custom-bits form starts with: Twitter's rate, more machines, a recent epoch. */
export const DEFAULT_CUSTOM: LayoutSpec = {
  name: 'custom',
  timeBits: 41,
  timeUnitMs: 1,
  sequenceBits: 10,
  machineBits: 12,
  epochMs: Date.UTC(2024, 0, 1),
  fieldOrder: 'machine-sequence',
};

/** The custom layout as the page lists it. @throws the errors of defineLayout for a bad spec. */
export function customLayout(spec: LayoutSpec): PageLayout {
  return { name: 'custom', label: 'Custom', layout: defineLayout({ ...spec, name: 'custom' }) };
}
