import type { Benchmark, BenchOutcome, Figures } from './types.js';
import { medianFigures, round3, spreadFigures, verdictBlocker } from './stats.js';

/**
 * The outcome of one benchmark from the rounds it measured: medians per figure (what the checks and the
 * ratio use), min/median/max per figure, and the verdict. A verdict (pass true/false) is taken only on
 * the medians of at least MIN_VERDICT_ROUNDS rounds per side; with fewer, or after a failure, pass is
 * null and the reason says why. Pure: the harness and the unit tests share it.
 */
export function outcomeOf(
  b: Pick<Benchmark, 'id' | 'title' | 'target' | 'baselineName' | 'rounds' | 'settings' | 'ratioFigure' | 'checks'>,
  rounds: { product: Figures[]; baseline: Figures[] },
  opts: { hasBaseline: boolean; failure?: string; durationMs: number },
): BenchOutcome {
  const base = {
    id: b.id,
    title: b.title,
    target: b.target,
    baselineName: b.baselineName,
    settings: { rounds: b.rounds, ...b.settings },
    ratioFigure: b.ratioFigure,
  };
  const failure = opts.failure?.split('\n')[0];
  if (!rounds.product.length) {
    return {
      ...base,
      status: failure ? 'failed' : 'not_measured',
      reason: failure ?? 'no round measured',
      rounds,
      ratio: null,
      checks: [],
      pass: null,
      durationMs: opts.durationMs,
    };
  }
  const product = medianFigures(rounds.product);
  const baseline = rounds.baseline.length ? medianFigures(rounds.baseline) : undefined;
  const q = b.ratioFigure && baseline ? product[b.ratioFigure]! / baseline[b.ratioFigure]! : Number.NaN;
  const ratio = Number.isFinite(q) ? round3(q) : null;
  const checks = b.checks(product, baseline, ratio, rounds);
  const blocker = verdictBlocker(rounds, opts.hasBaseline);
  const pass = failure || blocker ? null : checks.length > 0 && checks.every((c) => c.pass);
  return {
    ...base,
    status: failure ? 'failed' : 'measured',
    reason: failure ?? blocker ?? undefined,
    rounds,
    product,
    baseline,
    spread: {
      product: spreadFigures(rounds.product),
      baseline: rounds.baseline.length ? spreadFigures(rounds.baseline) : undefined,
    },
    ratio,
    checks,
    pass,
    durationMs: opts.durationMs,
  };
}
