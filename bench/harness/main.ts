/**
 * `npm run bench [-- b06 ...] [--quick] [--profile b06]`: runs the selected benchmarks (all by
 * default), each beside its baseline, and writes bench/results/{latest|partial|quick}.{json,md}.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { benchRoot, projectRoot } from './paths.js';
import { describeMachine } from './machine.js';
import { scanWatch } from './scan-report.js';
import { runBenchmark } from './runner.js';
import { writeReport, markdown, type RunReport } from './report.js';
import { updatePerformanceDoc } from './docs.js';
import { currentScale } from './scale.js';
import { benchNodeLines, useNodeBinary } from './node-lines.js';
import { describeRuntime, ensureCompiled, productNodeFlags, productRuntime } from './compiled.js';
import { treeState, outputBase, DirtyTreeError, type OutputBase } from './tree.js';
import type { Benchmark, BenchContext, BenchOutcome } from './types.js';

function parseArgs(argv: string[]) {
  const ids: string[] = [];
  let profile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') process.env.BENCH_SCALE = 'quick';
    else if (a === '--profile') profile = normalise(argv[++i] ?? '');
    else ids.push(normalise(a));
  }
  return { ids, profile };
}

/** `b6`, `B06`, `6` -> `b06`. */
function normalise(id: string): string {
  const n = /^b?(\d+)$/i.exec(id.trim());
  return n ? `b${n[1]!.padStart(2, '0')}` : id.toLowerCase();
}

function benchFiles(): { id: string; file: string }[] {
  return readdirSync(benchRoot)
    .filter((f) => /^b\d\d-.*\.ts$/.test(f))
    .sort()
    .map((f) => ({ id: f.slice(0, 3), file: path.join(benchRoot, f) }));
}

/** A benchmark file exports `benchmark`, or `benchmarks` (variants of one measure: sizes, servers). */
async function load(file: string): Promise<Benchmark[]> {
  const mod = (await import(file)) as { benchmark?: Benchmark; benchmarks?: Benchmark[] };
  const list = mod.benchmarks ?? (mod.benchmark ? [mod.benchmark] : []);
  if (!list.length) throw new Error('exports neither benchmark nor benchmarks');
  return list;
}

async function main(): Promise<void> {
  const { ids, profile } = parseArgs(process.argv.slice(2));
  if (profile) process.env.BENCH_PROFILE = profile;
  const all = benchFiles();
  const unknown = ids.filter((id) => !all.some((b) => b.id === id));
  if (unknown.length)
    throw new Error(`unknown benchmark(s) ${unknown.join(', ')}; known: ${all.map((b) => b.id).join(', ')}`);
  const selected = ids.length ? all.filter((b) => ids.includes(b.id)) : all;
  const runtime = productRuntime();
  // Before anything runs: a full run writes latest.* only from a clean tree (committed results are of
  // the committed code); refused here rather than after half an hour of measuring.
  const treeAtStart = treeState(projectRoot);
  let base: OutputBase;
  try {
    base = outputBase({
      quick: currentScale() === 'quick',
      selection: ids.length > 0,
      tree: treeAtStart,
      allowDirty: process.env.BENCH_ALLOW_DIRTY === '1',
      name: process.env.BENCH_RESULTS || undefined,
      runtime,
    });
  } catch (e) {
    if (!(e instanceof DirtyTreeError)) throw e;
    process.stderr.write(`[bench] ${e.message}\n`);
    process.exit(2);
  }
  const startedAt = new Date();
  const workDir = path.join(benchRoot, '.work', startedAt.toISOString().replace(/[:.]/g, '-'));
  mkdirSync(workDir, { recursive: true });
  const ctx: BenchContext = {
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6390',
    mongoUri: process.env.BENCH_MONGO_EMBEDDED_URI ?? process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27027/',
    mongoServers: {
      embedded: process.env.BENCH_MONGO_EMBEDDED_URI ?? process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27027/',
      test: process.env.BENCH_MONGO_TEST_URI ?? process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27027/',
    },
    workDir,
    cacheDir: path.join(benchRoot, '.cache'),
    log: (msg) => process.stderr.write(`[bench] ${msg}\n`),
  };
  mkdirSync(ctx.cacheDir, { recursive: true });
  // Before any benchmark: a build failure stops the run here, and its time is in no benchmark's.
  if (runtime === 'compiled') {
    const { distBuilt } = await ensureCompiled();
    ctx.log(`product nodes run compiled: dist/ ${distBuilt ? 'rebuilt from the changed sources' : 'is current'}`);
  } else ctx.log('product nodes run through tsx (BENCH_RUNTIME=tsx)');
  const lines = benchNodeLines();
  const machine = { ...(await describeMachine(ctx.redisUrl, ctx.mongoServers)), nodeLines: lines };
  ctx.log(`${currentScale()} scale; ${machine.cpuModel} x${machine.cores}; logs under ${workDir}`);
  ctx.log(`Node.js releases measured side by side: ${lines.map((l) => `${l.version} (${l.label})`).join(', ')}`);
  const outcomes: BenchOutcome[] = [];
  for (const { id, file } of selected) {
    let list: Benchmark[];
    try {
      list = await load(file);
    } catch (e) {
      ctx.log(`${id}: cannot load (${(e as Error).message.split('\n')[0]})`);
      outcomes.push({
        id,
        title: path.basename(file, '.ts'),
        target: '-',
        baselineName: '-',
        status: 'not_measured',
        reason: `benchmark could not load its subject: ${(e as Error).message.split('\n')[0]}`,
        settings: {},
        rounds: { product: [], baseline: [] },
        ratio: null,
        checks: [],
        pass: null,
        durationMs: 0,
      });
      continue;
    }
    for (const b of list) {
      for (const line of lines) {
        useNodeBinary(line.bin);
        ctx.log(`${b.id} ${b.title} (${b.rounds} rounds) on Node.js ${line.version}`);
        const scans = await scanWatch(ctx.mongoServers, ctx.log);
        const o = { ...(await runBenchmark(b, ctx)), node: line.version };
        await scans.report(b.id);
        ctx.log(
          `${b.id} on ${line.version}: ${o.status}${o.reason ? ` (${o.reason})` : ''} ratio=${o.ratio ?? '-'} pass=${o.pass} in ${Math.round(o.durationMs / 1000)} s`,
        );
        outcomes.push(o);
      }
    }
    useNodeBinary(undefined);
  }
  const finishedAt = new Date();
  const report: RunReport = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationS: Math.round((finishedAt.getTime() - startedAt.getTime()) / 1000),
    scale: currentScale(),
    selection: selected.map((b) => b.id),
    machine,
    settings: {
      profile: profile ?? null,
      productRuntime: runtime,
      productNodes: describeRuntime(runtime, productNodeFlags()),
      baselines: describeRuntime('tsx', productNodeFlags()),
      loadGenerators: 'separate processes on loopback, bounded counts and deadlines',
    },
    benchmarks: outcomes,
  };
  // The code must not have moved under the run either (a commit or an edit while it measured).
  const treeAtEnd = treeState(projectRoot);
  if (base !== 'partial' && base !== 'quick' && (treeAtEnd.commit !== treeAtStart.commit || treeAtEnd.changes.length)) {
    ctx.log(
      `the tree changed during the run (now ${treeAtEnd.commit}${treeAtEnd.changes.length ? ', with changes' : ''}): writing partial.* instead of ${base}.*`,
    );
    base = 'partial';
  }
  const out = writeReport(path.join(benchRoot, 'results'), base, report);
  ctx.log(`wrote ${out.json} and ${out.md}`);
  if (base === 'latest' && updatePerformanceDoc(markdown(report)))
    ctx.log('updated the results table in docs/performance.md');
  // Logs stay for inspection; object stores and generated uploads can be gigabytes.
  if (!process.env.BENCH_KEEP_WORK) {
    for (const f of readdirSync(workDir))
      if (f !== 'logs') rmSync(path.join(workDir, f), { recursive: true, force: true, maxRetries: 2 });
  }
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`[bench] fatal: ${e?.stack ?? e}\n`);
  process.exit(1);
});
