import type { Figures } from './types.js';

/** Nearest-rank percentile of an unsorted sample (p in 0..100); NaN on an empty sample. */
export function percentile(values: ArrayLike<number>, p: number): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  const rank = Math.min(n, Math.max(1, Math.ceil((p / 100) * n)));
  return sorted[rank - 1]!;
}

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
