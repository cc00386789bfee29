// The side-by-side comparison behind `ids compare` and the inspector page: what each layout gives,
// before a team commits to one for decades. (The table of other schemes is the CLI's, beside
// `ids compare --schemes`.)
import { InvalidArgumentError, received } from './errors.js';
import {
  defineLayout,
  type FieldOrder,
  type Layout,
  type LayoutLimits,
  type LayoutSpec,
  layoutLimits,
  layoutShape,
  type MachinePart,
} from './layout.js';

/** One column of the comparison: the layout's shape and every figure `layoutLimits` derives. */
export interface LayoutComparison extends LayoutLimits {
  /** The layout's label ("custom" when its spec had none). */
  readonly name: string;
  /** Bits of the time field. */
  readonly timeBits: number;
  /** Length of one tick, in ms. */
  readonly timeUnitMs: number;
  /** Bits of the per-tick sequence. */
  readonly sequenceBits: number;
  /** Bits of the machine ID. */
  readonly machineBits: number;
  /** The named slices of the machine field, highest first; undefined when it is one field. */
  readonly machineParts: readonly MachinePart[] | undefined;
  /** Which low field sits higher. */
  readonly fieldOrder: FieldOrder;
  /** The instant time 0 stands for. */
  readonly epoch: Date;
}

/**
 * Compares layouts side by side, in the order given. Specs are validated as `defineLayout`
 * validates them.
 *
 * @throws InvalidArgumentError when `layouts` is not an array; the layout errors of defineLayout
 * (InvalidLayoutError and the InvalidBits* classes) for an invalid spec.
 */
export function compareLayouts(layouts: readonly (Layout | LayoutSpec)[]): LayoutComparison[] {
  if (!Array.isArray(layouts)) {
    throw new InvalidArgumentError(
      `compareLayouts: expected an array of layouts, received ${received(layouts)}`,
    );
  }
  return layouts.map((spec) => {
    const layout = defineLayout(spec);
    return {
      ...layoutShape(layout),
      machineParts: layout.machineParts,
      epoch: new Date(layout.epochMs),
      ...layoutLimits(layout),
    };
  });
}
