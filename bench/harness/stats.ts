import type { Figures } from './types.js';

/** Fewest rounds per side a verdict is taken on (issue: the median of at least 3, never of 2). */
export const MIN_VERDICT_ROUNDS = 3;

/** Nearest-rank percentile of an unsorted sample (p in 0..100); NaN on an empty sample. */
export function percentile(values: ArrayLike<number>, p: number): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  const rank = Math.min(n, Math.max(1, Math.ceil((p / 100) * n)));
  return sorted[rank - 1]!;
}

/**
 * Median of the finite values. With an odd count it is a measured value; with an even count the mean
 * of the two middle ones (which is why verdicts need at least 3 rounds: the "median" of 2 is a mean).
 */
export function median(values: number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  if (!finite.length) return Number.NaN;
  const s = [...finite].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Per-figure median over the rounds of one side. */
export function medianFigures(rounds: Figures[]): Figures {
  const names = new Set(rounds.flatMap((r) => Object.keys(r)));
  const out: Figures = {};
  for (const name of names) out[name] = round3(median(rounds.map((r) => r[name] ?? Number.NaN)));
  return out;
}

/** Smallest, median and largest value of one figure over the rounds, and how many rounds had it. */
export interface Spread {
  min: number;
  median: number;
  max: number;
  n: number;
}

/** Per-figure min/median/max over the rounds of one side (non-finite round values are left out). */
export function spreadFigures(rounds: Figures[]): Record<string, Spread> {
  const names = new Set(rounds.flatMap((r) => Object.keys(r)));
  const out: Record<string, Spread> = {};
  for (const name of names) {
    const vals = rounds.map((r) => r[name]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    out[name] = vals.length
      ? { min: round3(Math.min(...vals)), median: round3(median(vals)), max: round3(Math.max(...vals)), n: vals.length }
      : { min: Number.NaN, median: Number.NaN, max: Number.NaN, n: 0 };
  }
  return out;
}

/**
 * Why no verdict can be taken on these rounds, or null: each side that ran must have at least
 * MIN_VERDICT_ROUNDS rounds (a baseline that was not measured at all is allowed only when the
 * benchmark has none).
 */
export function verdictBlocker(
  rounds: { product: Figures[]; baseline: Figures[] },
  hasBaseline: boolean,
): string | null {
  if (rounds.product.length < MIN_VERDICT_ROUNDS)
    return `no verdict: ${rounds.product.length} product round(s), at least ${MIN_VERDICT_ROUNDS} needed`;
  if (hasBaseline && rounds.baseline.length < MIN_VERDICT_ROUNDS)
    return `no verdict: ${rounds.baseline.length} baseline round(s), at least ${MIN_VERDICT_ROUNDS} needed`;
  return null;
}

export function round3(v: number): number {
  return Number.isFinite(v) ? Math.round(v * 1000) / 1000 : v;
}

/** Summarises a latency sample in milliseconds. */
export function latencyFigures(samplesMs: ArrayLike<number>, prefix = ''): Figures {
  return {
    [`${prefix}p50_ms`]: round3(percentile(samplesMs, 50)),
    [`${prefix}p99_ms`]: round3(percentile(samplesMs, 99)),
    [`${prefix}max_ms`]: round3(percentile(samplesMs, 100)),
  };
}
