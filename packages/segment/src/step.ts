import { InvalidArgumentError } from '@ids/engine';
import { checkInteger, received } from '@ids/engine/internal';
import { StepOutOfRangeError } from './errors.js';

/** The bounds and target of the dynamic step (see `nextStep`). */
export interface StepRule {
  /** The smallest step the rule may shrink to. */
  readonly minStep: number;
  /** The largest step the rule may grow to. */
  readonly maxStep: number;
  /** How long, in ms, a segment should last. */
  readonly targetMs: number;
}

/** Leaf's largest step (MAX_STEP), the default upper bound. */
export const DEFAULT_MAX_STEP = 1_000_000;
/** Leaf's target segment duration (15 minutes), the default target. */
export const DEFAULT_TARGET_MS = 15 * 60 * 1000;
/** The largest step any store takes: the `step` column is a 32-bit integer. */
export const STEP_LIMIT = 2 ** 31 - 1;

/**
 * Leaf's dynamic step, made explicit: `lastedMs` is the time between the fetch of the previous
 * segment and this one (how long a segment lasted). Shorter than the target doubles the step;
 * longer than twice the target halves it; in between keeps it. The result stays within
 * [minStep, maxStep] (Leaf keeps the step when doubling would pass its maximum; clamping gives
 * the same ceiling one fetch sooner). No duration yet (the first fetch) keeps the step.
 */
export function nextStep(step: number, lastedMs: number | undefined, rule: StepRule): number {
  if (lastedMs === undefined) return step;
  if (lastedMs < rule.targetMs) return Math.min(step * 2, rule.maxStep);
  if (lastedMs > 2 * rule.targetMs) return Math.max(Math.floor(step / 2), rule.minStep);
  return step;
}

/** @throws StepOutOfRangeError unless `value` is an integer from `min` to `max` (the engine's check). */
export function checkStep(value: unknown, what: string, min: number, max: number): number {
  return checkInteger(value, what, min, max, (at, expected) => new StepOutOfRangeError(`${at}: ${expected}`));
}

/** @throws InvalidArgumentError unless `value` is finite and in [min, max]. */
export function checkNumber(value: unknown, what: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      `${what}: expected a number from ${min} to ${max}, received ${received(value)}`,
    );
  }
  return value;
}
