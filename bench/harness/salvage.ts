/**
 * `node --import tsx bench/harness/salvage.ts <harness-log> <report-with-machine.json> <startedAt> <commit>`: rebuilds
 * bench/results/latest.{json,md} from the round lines a run printed, for a run that had to be stopped
 * before its end. Benchmarks the log does not reach are reported as not measured.
 */
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchRoot } from './paths.js';
import { medianFigures, round3 } from './stats.js';
import { writeReport, markdown, type RunReport } from './report.js';
import { updatePerformanceDoc } from './docs.js';
import type { Benchmark, BenchOutcome, Figures } from './types.js';

function parseFigures(s: string): Figures {
  return Object.fromEntries(s.trim().split(/\s+/).map((kv) => kv.split('=')).map(([k, v]) => [k!, Number(v)]));
}

async function main(): Promise<void> {
  const [logFile, machineFrom, startedAt, commit] = process.argv.slice(2) as [string, string, string, string];
  const log = readFileSync(logFile, 'utf8').split('\n');
  const previous = JSON.parse(readFileSync(machineFrom, 'utf8')) as RunReport;
  const ids = ['b01', 'b02', 'b03', 'b04', 'b05', 'b06', 'b07', 'b08', 'b09', 'b10'];
  const files = (await import('node:fs')).readdirSync(benchRoot).filter((f) => /^b\d\d-.*\.ts$/.test(f)).sort();
  const outcomes: BenchOutcome[] = [];
  const ctx = { redisUrl: '', mongoUri: '', workDir: mkdtempSync(path.join(tmpdir(), 'salvage-')), cacheDir: '', log: () => undefined };
  for (const id of ids) {
    const b = ((await import(path.join(benchRoot, files.find((f) => f.startsWith(id))!))) as { benchmark: Benchmark }).benchmark;
    const sides = await b.sides(ctx);
    const start = log.findIndex((l) => l.startsWith(`[bench] ${id} `));
    const end = log.findIndex((l, i) => i > start && l.startsWith(`[bench] ${id}: `));
    const base = { id, title: b.title, target: b.target, baselineName: b.baselineName, settings: { rounds: b.rounds, ...b.settings }, ratioFigure: b.ratioFigure };
    const rounds = { product: [] as Figures[], baseline: [] as Figures[] };
    const lines = start < 0 ? [] : log.slice(start, end < 0 ? undefined : end);
    for (const l of lines) {
      const m = /^\[bench\] {3}round \d+ (.+?): (.+) \(\d+ ms\)$/.exec(l);
      if (!m) continue;
      if (m[1] === sides.product.label) rounds.product.push(parseFigures(m[2]!));
      else if (m[1] === sides.baseline?.label) rounds.baseline.push(parseFigures(m[2]!));
    }
    if (!rounds.product.length) {
      const failed = lines.find((l) => l.startsWith(`[bench]   ${id} failed:`));
      outcomes.push({ ...base, status: failed ? 'failed' : 'not_measured', reason: failed ? failed.replace(/^.*failed: /, '') : 'the committed run was stopped before this benchmark (time)', rounds, ratio: null, checks: [], pass: null, durationMs: 0 });
      continue;
    }
    const product = medianFigures(rounds.product);
    const baseline = rounds.baseline.length ? medianFigures(rounds.baseline) : undefined;
    const ratio = b.ratioFigure && baseline ? round3(product[b.ratioFigure]! / baseline[b.ratioFigure]!) : null;
    const checks = b.checks(product, baseline, ratio, rounds);
    const complete = end >= 0;
    outcomes.push({ ...base, status: 'measured', reason: complete ? undefined : 'run stopped during this benchmark; rounds measured so far', rounds, product, baseline, ratio, checks, pass: checks.every((c) => c.pass), durationMs: 0 });
  }
  const machine = { ...previous.machine, commit, loadAverageAtStart: ['not recorded (salvaged run)'] };
  const finishedAt = new Date();
  const report: RunReport = {
    ...previous, machine, startedAt, finishedAt: finishedAt.toISOString(), durationS: Math.round((finishedAt.getTime() - Date.parse(startedAt)) / 1000),
    selection: ids, benchmarks: outcomes, settings: { ...previous.settings, salvagedFromLog: true },
  };
  writeReport(path.join(benchRoot, 'results'), 'latest', report);
  updatePerformanceDoc(markdown(report));
  process.stdout.write('salvaged\n');
}

main().catch((e) => {
  process.stderr.write(`${e?.stack ?? e}\n`);
  process.exit(1);
});
