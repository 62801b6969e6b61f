import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BenchOutcome } from './types.js';
import type { Spread } from './stats.js';
import { describeRuntime } from './compiled.js';

export interface RunReport {
  startedAt: string;
  finishedAt: string;
  durationS: number;
  scale: string;
  selection: string[];
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  benchmarks: BenchOutcome[];
}

function fmt(v: number | null | undefined): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 0.1 ? v.toFixed(2) : v.toPrecision(2);
}

/** `name median (min-max)` per figure; the range is left out where every round gave the same value. */
function figures(f: Record<string, number> | undefined, spread?: Record<string, Spread>): string {
  if (!f) return '-';
  return Object.entries(f)
    .map(([k, v]) => {
      const s = spread?.[k];
      const range = s && s.n > 1 && s.min !== s.max ? ` (${fmt(s.min)}-${fmt(s.max)})` : '';
      return `${k} ${fmt(v)}${range}`;
    })
    .join('<br>');
}

function verdict(b: BenchOutcome): string {
  if (b.status === 'not_measured') return `not measured: ${b.reason}`;
  if (b.status === 'failed') return `failed: ${b.reason}`;
  const prefix = b.pass === null && b.reason ? [b.reason] : [];
  const checks = b.checks.map(
    (c) => `${c.pass ? 'pass' : 'FAIL'} ${c.name} ${fmt(c.value)} ${c.kind === 'min' ? '>=' : '<='} ${c.limit}`,
  );
  return [...prefix, ...checks].join('<br>');
}

/** The Node.js releases of a run's outcomes, in the order they were measured. */
function nodeReleases(outcomes: BenchOutcome[]): string[] {
  return [...new Set(outcomes.flatMap((b) => (b.node ? [b.node] : [])))];
}

/** One row per benchmark, one column per Node.js release: the ratio and the verdict on each. */
export function sideBySide(outcomes: BenchOutcome[], releases: string[]): string[] {
  const head = releases.map((v) => `Node ${v.replace(/^v/, '')}`);
  const rows = [
    '### The same benchmarks on each Node.js release',
    '',
    `| # | ${head.join(' | ')} |`,
    `|---|${head.map(() => '---|').join('')}`,
  ];
  const ids = [...new Set(outcomes.map((b) => b.id))];
  for (const id of ids) {
    const cells = releases.map((v) => {
      const b = outcomes.find((o) => o.id === id && o.node === v);
      if (!b) return '-';
      const result =
        b.status !== 'measured'
          ? b.status.replace('_', ' ')
          : b.pass === null
            ? 'no verdict'
            : b.pass
              ? 'pass'
              : 'fail';
      return `${b.ratio === null ? '-' : `${fmt(b.ratio)} (${b.ratioFigure})`}: ${result}`;
    });
    rows.push(`| ${id.toUpperCase()} | ${cells.join(' | ')} |`);
  }
  return rows;
}

/** The markdown table of a run (also pasted into docs/performance.md). */
export function markdown(r: RunReport): string {
  const m = r.machine as {
    cpuModel: string;
    cores: number;
    memoryMiB: number;
    node: string;
    commit: string;
    loadAverageAtStart: number[];
    servers: Record<string, string>;
  };
  const releases = nodeReleases(r.benchmarks);
  const lines = [
    `# Benchmark results (${r.scale} scale)`,
    '',
    `Run ${r.startedAt} - ${r.finishedAt} (${r.durationS} s), commit ${m.commit}, ${m.cpuModel} x${m.cores}, ${m.memoryMiB} MiB, Node ${releases.length ? releases.join(' and ') : m.node},`,
    `Redis ${m.servers.redis}, MongoDB protocol ${m.servers.mongodb_protocol}${m.servers.mongodb_protocol_test ? ` and ${m.servers.mongodb_protocol_test}` : ''} (${m.servers.mongodb_kind ?? '-'}); load average at start ${m.loadAverageAtStart.join(' ')}.`,
    `Product nodes: ${r.settings.productNodes ?? describeRuntime('tsx')}; baselines: ${r.settings.baselines ?? 'through tsx'}; load generators: through tsx.`,
    'Figures are medians over the rounds, with (min-max) over the rounds where they differ; product and baseline rounds alternate within the run;',
    'ratio = product median / baseline median of the named figure; verdicts are taken on medians of at least 3 rounds per side.',
    '',
    '| # | Measure | Product | Baseline | Ratio | Target | Result |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const b of r.benchmarks) {
    const ratio = b.ratio === null ? '-' : `${fmt(b.ratio)} (${b.ratioFigure})`;
    const result =
      b.status === 'measured'
        ? b.pass === null
          ? '**no verdict**'
          : b.pass
            ? '**pass**'
            : '**fail**'
        : `**${b.status.replace('_', ' ')}**`;
    const rounds = `${b.rounds.product.length}${b.rounds.baseline.length ? `+${b.rounds.baseline.length}` : ''} rounds`;
    const id =
      releases.length > 1 && b.node ? `${b.id.toUpperCase()}<br>Node ${b.node.replace(/^v/, '')}` : b.id.toUpperCase();
    lines.push(
      `| ${id} | ${b.title} (${rounds}) | ${figures(b.product, b.spread?.product)} | ${b.baselineName}:<br>${figures(b.baseline, b.spread?.baseline)} | ${ratio} | ${b.target} | ${result}<br>${verdict(b)} |`,
    );
  }
  if (releases.length > 1) lines.push('', ...sideBySide(r.benchmarks, releases));
  lines.push(
    '',
    "Settings per benchmark are in latest.json (`benchmarks[].settings`), with every round's figures.",
    '',
  );
  return lines.join('\n');
}

export function writeReport(dir: string, base: string, r: RunReport): { json: string; md: string } {
  mkdirSync(dir, { recursive: true });
  const json = path.join(dir, `${base}.json`);
  const md = path.join(dir, `${base}.md`);
  writeFileSync(json, JSON.stringify(r, null, 2) + '\n');
  writeFileSync(md, markdown(r));
  return { json, md };
}
