import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BenchOutcome } from './types.js';

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

function figures(f: Record<string, number> | undefined): string {
  if (!f) return '-';
  return Object.entries(f).map(([k, v]) => `${k} ${fmt(v)}`).join('<br>');
}

function verdict(b: BenchOutcome): string {
  if (b.status === 'not_measured') return `not measured: ${b.reason}`;
  if (b.status === 'failed') return `failed: ${b.reason}`;
  const checks = b.checks.map((c) => `${c.pass ? 'pass' : 'FAIL'} ${c.name} ${fmt(c.value)} ${c.kind === 'min' ? '>=' : '<='} ${c.limit}`);
  return checks.join('<br>');
}

/** The markdown table of a run (also pasted into docs/performance.md). */
export function markdown(r: RunReport): string {
  const m = r.machine as { cpuModel: string; cores: number; memoryMiB: number; node: string; commit: string; loadAverageAtStart: number[]; servers: Record<string, string> };
  const lines = [
    `# Benchmark results (${r.scale} scale)`,
    '',
    `Run ${r.startedAt} - ${r.finishedAt} (${r.durationS} s), commit ${m.commit}, ${m.cpuModel} x${m.cores}, ${m.memoryMiB} MiB, Node ${m.node},`,
    `Redis ${m.servers.redis}, MongoDB protocol ${m.servers.mongodb_protocol}; load average at start ${m.loadAverageAtStart.join(' ')}.`,
    'Figures are medians over the rounds (product and baseline alternate within the run); ratio = product / baseline of the named figure.',
    '',
    '| # | Measure | Product | Baseline | Ratio | Target | Result |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const b of r.benchmarks) {
    const ratio = b.ratio === null ? '-' : `${fmt(b.ratio)} (${b.ratioFigure})`;
    const result = b.status === 'measured' ? (b.pass ? '**pass**' : '**fail**') : `**${b.status.replace('_', ' ')}**`;
    lines.push(`| ${b.id.toUpperCase()} | ${b.title} | ${figures(b.product)} | ${b.baselineName}:<br>${figures(b.baseline)} | ${ratio} | ${b.target} | ${result}<br>${verdict(b)} |`);
  }
  lines.push('', 'Settings per benchmark are in latest.json (`benchmarks[].settings`), with every round\'s figures.', '');
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
