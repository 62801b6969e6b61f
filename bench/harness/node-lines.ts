import { spawnSync } from 'node:child_process';
import { DEVELOPMENT_LINE, nodeBinary } from '../../scripts/node-line.mjs';

/**
 * The Node.js releases one run measures, side by side (issue 39 §9): the line the product ships
 * (Node.js 24) and the machine's own Node.js when it is another release. Every process of a benchmark
 * (product nodes, baselines, load generators) runs on the release measured, so each row compares product
 * and baseline on one runtime, and the rows of two releases compare the runtimes.
 *
 * BENCH_NODE_LINES picks otherwise: a comma list of `24`, `22` and `machine` (the first is the one the
 * verdict of record is taken on; the others are reported beside it).
 */
export interface NodeLine {
  /** What was asked: `24`, `22` or `machine`. */
  label: string;
  bin: string;
  /** `process.version` of that binary, e.g. `v24.22.3`. */
  version: string;
}

function versionOf(bin: string): string {
  const r = spawnSync(bin, ['-p', 'process.version'], { encoding: 'utf8' });
  const v = r.stdout?.trim();
  if (r.status !== 0 || !v) throw new Error(`${bin} did not run (${r.stderr?.trim() || r.error?.message})`);
  return v;
}

/**
 * The machine's own Node.js: the one `npm run bench` was started with. scripts/node-line.mjs names it in
 * MACHINE_NODE when it re-ran the command on a supported release; otherwise it is this process's.
 */
export function machineNode(env: NodeJS.ProcessEnv = process.env): string {
  return env.MACHINE_NODE || process.execPath;
}

/** Parses BENCH_NODE_LINES (or the default) into the binaries to run, without two of one release. */
export function benchNodeLines(env: NodeJS.ProcessEnv = process.env): NodeLine[] {
  const asked = (env.BENCH_NODE_LINES ?? `${DEVELOPMENT_LINE},machine`)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!asked.length) throw new Error('BENCH_NODE_LINES names no Node.js line (use 24, 22 and/or machine)');
  const out: NodeLine[] = [];
  for (const label of asked) {
    if (label !== 'machine' && label !== '22' && label !== '24')
      throw new Error(`BENCH_NODE_LINES: ${JSON.stringify(label)} is not 24, 22 or machine`);
    const bin = label === 'machine' ? machineNode(env) : nodeBinary(Number(label));
    const version = versionOf(bin);
    // The machine's Node.js may be the shipped release itself: then there is one line to measure.
    if (!out.some((l) => l.version === version)) out.push({ label, bin, version });
  }
  return out;
}

let current: string | undefined;

/** The Node.js binary the benchmark processes spawned from now on run on. */
export function useNodeBinary(bin: string | undefined): void {
  current = bin;
}

export function benchNodeBinary(): string {
  return current ?? process.execPath;
}
