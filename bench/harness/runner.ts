import type { Benchmark, BenchContext, BenchOutcome, Figures, Side } from './types.js';
import { medianFigures, round3 } from './stats.js';

async function measure(side: Side, index: number, ctx: BenchContext, sink: Figures[]): Promise<void> {
  const t0 = Date.now();
  const f = await side.round(index);
  sink.push(f);
  ctx.log(`  round ${index + 1} ${side.label}: ${Object.entries(f).map(([k, v]) => `${k}=${round3(v)}`).join(' ')} (${Date.now() - t0} ms)`);
}

/**
 * Runs one benchmark: both sides started, rounds alternating product-first and baseline-first so
 * drift in the shared machine's load hits both, medians per figure, target checks.
 */
export async function runBenchmark(b: Benchmark, ctx: BenchContext): Promise<BenchOutcome> {
  const t0 = Date.now();
  const base = { id: b.id, title: b.title, target: b.target, baselineName: b.baselineName, settings: { rounds: b.rounds, ...b.settings }, ratioFigure: b.ratioFigure };
  const rounds = { product: [] as Figures[], baseline: [] as Figures[] };
  const reason = await b.unavailable().catch((e: Error) => `availability check failed: ${e.message}`);
  if (reason) return { ...base, status: 'not_measured', reason, rounds, ratio: null, checks: [], pass: null, durationMs: Date.now() - t0 };
  let sides: { product: Side; baseline?: Side } | undefined;
  let failure: string | undefined;
  try {
    sides = await b.sides(ctx);
    await sides.product.start();
    await sides.baseline?.start();
    for (let r = 0; r < b.rounds; r++) {
      const productFirst = r % 2 === 0;
      if (productFirst) await measure(sides.product, r, ctx, rounds.product);
      if (sides.baseline) await measure(sides.baseline, r, ctx, rounds.baseline);
      if (!productFirst) await measure(sides.product, r, ctx, rounds.product);
    }
  } catch (e) {
    failure = String((e as Error)?.stack ?? e);
    ctx.log(`  ${b.id} failed: ${failure}`);
  } finally {
    for (const s of [sides?.product, sides?.baseline]) await s?.stop().catch((e: Error) => ctx.log(`  stop ${s.label}: ${e.message}`));
  }
  if (failure && !rounds.product.length) {
    return { ...base, status: 'failed', reason: failure.split('\n')[0], rounds, ratio: null, checks: [], pass: null, durationMs: Date.now() - t0 };
  }
  const product = medianFigures(rounds.product);
  const baseline = rounds.baseline.length ? medianFigures(rounds.baseline) : undefined;
  const ratio = b.ratioFigure && baseline ? round3(product[b.ratioFigure]! / baseline[b.ratioFigure]!) : null;
  const checks = b.checks(product, baseline, Number.isFinite(ratio) ? ratio : null, rounds);
  return {
    ...base,
    status: failure ? 'failed' : 'measured',
    reason: failure?.split('\n')[0],
    rounds, product, baseline, ratio, checks,
    pass: !failure && checks.length > 0 && checks.every((c) => c.pass),
    durationMs: Date.now() - t0,
  };
}
