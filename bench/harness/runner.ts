import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Benchmark, BenchContext, BenchOutcome, Figures, Side } from './types.js';
import { round3 } from './stats.js';
import { outcomeOf } from './verdict.js';

/**
 * Writes the machine's dirty pages out (`sync`) before a round, outside its time: every round then starts
 * with nothing of an earlier round's writes left to write back. B7 writes a new GiB each round; without
 * this, the round that crossed the kernel's dirty limit was throttled by the write-back of the rounds
 * before it, whichever side it was (one run: the product at 181, then 104 and 101 MiB/s, the raw copy at
 * 234, 246, then 123), and a database benchmark after it (B8) wrote beside that write-back.
 */
const writeBack = promisify(execFile);

async function measure(side: Side, index: number, ctx: BenchContext, sink: Figures[]): Promise<void> {
  await writeBack('sync');
  const t0 = Date.now();
  const f = await side.round(index);
  sink.push(f);
  ctx.log(
    `  round ${index + 1} ${side.label}: ${Object.entries(f)
      .map(([k, v]) => `${k}=${round3(v)}`)
      .join(' ')} (${Date.now() - t0} ms)`,
  );
}

/**
 * The order of the sides in round r: product first in even rounds, baseline first in odd ones, so
 * drift in the shared machine's load hits both.
 */
export function roundOrder(r: number): ('product' | 'baseline')[] {
  return r % 2 === 0 ? ['product', 'baseline'] : ['baseline', 'product'];
}

/**
 * Runs one benchmark: both sides started, rounds alternating (roundOrder), then the outcome
 * (medians, min/median/max, target checks; a verdict only on at least 3 rounds per side).
 */
export async function runBenchmark(b: Benchmark, ctx: BenchContext): Promise<BenchOutcome> {
  const t0 = Date.now();
  const rounds = { product: [] as Figures[], baseline: [] as Figures[] };
  const reason = await b.unavailable().catch((e: Error) => `availability check failed: ${e.message}`);
  if (reason) {
    return {
      id: b.id,
      title: b.title,
      target: b.target,
      baselineName: b.baselineName,
      settings: { rounds: b.rounds, ...b.settings },
      ratioFigure: b.ratioFigure,
      status: 'not_measured',
      reason,
      rounds,
      ratio: null,
      checks: [],
      pass: null,
      durationMs: Date.now() - t0,
    };
  }
  let sides: { product: Side; baseline?: Side } | undefined;
  let failure: string | undefined;
  try {
    sides = await b.sides(ctx);
    await sides.product.start();
    await sides.baseline?.start();
    for (let r = 0; r < b.rounds; r++) {
      for (const which of roundOrder(r)) {
        const side = sides[which];
        if (side) await measure(side, r, ctx, rounds[which]);
      }
    }
  } catch (e) {
    failure = String((e as Error)?.stack ?? e);
    ctx.log(`  ${b.id} failed: ${failure}`);
  } finally {
    for (const s of [sides?.product, sides?.baseline])
      await s?.stop().catch((e: Error) => ctx.log(`  stop ${s.label}: ${e.message}`));
  }
  return outcomeOf(b, rounds, { hasBaseline: !!sides?.baseline, failure, durationMs: Date.now() - t0 });
}
