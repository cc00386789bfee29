import type { MachinePart } from '@ids/engine';

/** Rows of cells as aligned columns, two spaces apart, no trailing spaces. */
export function columns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/**
 * A whole number with thousands separators (25,600), as toLocaleString('en-US') writes it but
 * without ICU: the first toLocaleString of a process costs ~18 ms CPU, more than the rest of
 * `ids generate -n 1`, and the help texts built at startup need this.
 */
export const int = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** A split machine field's parts after its width, ` (datacenter 5 + worker 5)`; '' for a single field. */
export function partsSuffix(parts: readonly MachinePart[] | undefined): string {
  return parts ? ` (${parts.map((p) => `${p.name} ${p.bits}`).join(' + ')})` : '';
}
