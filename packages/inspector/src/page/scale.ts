// The axes of the comparison: linear in time for lifetimes, logarithmic for rates and machine
// counts (they span 1 to 2^30, and a linear bar would hide every layout but the largest).

const YEAR_MS = 365.25 * 24 * 3600 * 1000;

/** A span of time the lifetime chart shows, with labelled years. */
export interface TimeAxis {
  /** Left edge, Unix ms (1 January of a round year). */
  readonly startMs: number;
  /** Right edge, Unix ms. */
  readonly endMs: number;
  /** The years labelled under the chart. */
  readonly ticks: readonly { readonly ms: number; readonly label: string }[];
}

/** How far the chart reaches past its earliest start: a custom layout may last to year 275760. */
export const MAX_SPAN_YEARS = 400;

function yearStart(year: number): number {
  return Date.UTC(year, 0, 1);
}

/** An axis from the decade of the earliest epoch to past the latest end (at most MAX_SPAN_YEARS). */
export function timeAxis(spans: readonly { startMs: number; endMs: number }[], nowMs: number): TimeAxis {
  const starts = spans.map((s) => s.startMs).concat(nowMs);
  const ends = spans.map((s) => s.endMs).concat(nowMs);
  const firstYear = Math.floor(new Date(Math.min(...starts)).getUTCFullYear() / 10) * 10;
  const lastYear = Math.min(
    Math.ceil((new Date(Math.max(...ends)).getUTCFullYear() + 1) / 10) * 10,
    firstYear + MAX_SPAN_YEARS,
  );
  const span = lastYear - firstYear;
  const step = span <= 60 ? 10 : span <= 150 ? 25 : span <= 300 ? 50 : 100;
  // The first year is always labelled, then every `step` years from a round one; a round year
  // too close to the first would print over it.
  const ticks = [{ ms: yearStart(firstYear), label: String(firstYear) }];
  for (let year = Math.ceil(firstYear / step) * step; year <= lastYear; year += step) {
    if (year - firstYear >= step / 2) ticks.push({ ms: yearStart(year), label: String(year) });
  }
  return { startMs: yearStart(firstYear), endMs: yearStart(lastYear), ticks };
}

/** Where an instant falls on the axis, in percent of its width, held to 0..100. */
export function timePercent(axis: TimeAxis, ms: number): number {
  const percent = ((ms - axis.startMs) / (axis.endMs - axis.startMs)) * 100;
  return Math.min(100, Math.max(0, percent));
}

/** A logarithmic axis from 1 to 10^decades. */
export interface LogAxis {
  /** Powers of ten the axis spans. */
  readonly decades: number;
}

/** The axis that holds every value (at least one decade). */
export function logAxis(values: readonly number[]): LogAxis {
  const largest = Math.max(10, ...values);
  return { decades: Math.ceil(Math.log10(largest) - 1e-9) };
}

/** Where a value falls on a log axis, in percent (1 and below at 0). */
export function logPercent(axis: LogAxis, value: number): number {
  return value <= 1 ? 0 : Math.min(100, (Math.log10(value) / axis.decades) * 100);
}

/** 1, 10, 100, 1k, ..., 1M, ..., 1G: the labels of a log axis. */
export function powerLabel(exponent: number): string {
  const units = ['', 'k', 'M', 'G', 'T', 'P'];
  const unit = units[Math.floor(exponent / 3)] ?? `e${exponent - (exponent % 3)}`;
  return `${10 ** (exponent % 3)}${unit}`;
}

/** A lifetime in years, as the page writes it. */
export function years(ms: number): string {
  return `${Math.floor(ms / YEAR_MS)} years`;
}
