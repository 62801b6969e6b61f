import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

/**
 * No test decides on a wall-clock or CPU-time threshold (decision 1050): a time measured on a shared
 * machine says as much about the machine as about the product, and a suite that goes red for it teaches
 * everyone to re-run red suites. Time properties are benchmarks (bench/, `npm run bench`); a test checks
 * the bound that makes the time small, or awaits the event. This scan keeps it so: it fails on a test
 * file that measures time (performance.now, process.hrtime, an event-loop monitor, CPU time), computes
 * an elapsed time from the clock, or polls against a clock deadline, beyond the deadline loops listed
 * below (each waits for a state no event announces; the deadline only ends a wait that would otherwise
 * hang, it is not what the test checks). A new one goes into this list with its reason, or better, away.
 */
const here = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(here), '../..');

/** Files whose clock deadlines are known and reasoned (docs/reliability.md, "Time in tests"). */
const DEADLINE_LOOPS: Record<string, string> = {
  'test/integration/auth/realm-key-rotation.test.ts': 'other nodes re-read stored keys on their own timer',
  'test/integration/audit/audit-checkpoint-timer.test.ts': "another node's checkpoint timer writes the checkpoint",
  'test/integration/storage/versitygw.test.ts':
    'the upload source and the server state are read, nothing announces them',
  'test/integration/data/readyz-cluster.test.ts': "Redis Cluster's own failure detection (cluster-node-timeout)",
  'test/e2e/actors/fencing.test.ts': 'the stalled owner spins until a marker file appears (the stall itself)',
  'test/e2e/actors/eviction.test.ts': 'the stalled owner spins until a marker file appears (the stall itself)',
  'test/resilience/faults/chaos.test.ts': 'the chaos run is a fixed window of faults by design',
};

/** Files that record a duration as a figure of their run (never compared with anything). */
const RECORDED_FIGURES: Record<string, string> = {
  'test/resilience/faults/chaos.test.ts': "the run's wall time, written to its run report beside the fault counts",
  'test/resilience/faults/fleet-day.test.ts': "the day's wall time, printed with the day's figures",
};

/** What measures time, or compares a clock with a deadline. */
const RULES: { name: string; re: RegExp; allowed?: (file: string) => boolean }[] = [
  { name: 'performance.now()', re: /\bperformance\.now\(\)/ },
  { name: 'process.hrtime', re: /\bprocess\.hrtime\b/ },
  { name: 'event-loop monitor', re: /\bmonitorEventLoopDelay\b|LOOP_MONITOR/ },
  { name: 'CPU time', re: /\bprocess\.cpuUsage\(/ },
  {
    name: 'elapsed time from the clock',
    re: /Date\.now\(\)\s*-\s*[A-Za-z_][\w.]*\b(?!\s*\*)/,
    allowed: (f) => f in RECORDED_FIGURES,
  },
  { name: 'clock deadline', re: /Date\.now\(\)\s*[<>]=?|[<>]=?\s*Date\.now\(\)/, allowed: (f) => f in DEADLINE_LOOPS },
];

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...testFiles(p));
    else if (e.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** Each line of `source` that breaks a rule, as `file:line rule`. */
export function timeVerdicts(file: string, source: string): string[] {
  const found: string[] = [];
  source.split('\n').forEach((line, i) => {
    if (/^\s*(\/\/|\*)/.test(line)) return;
    for (const r of RULES) if (r.re.test(line) && !r.allowed?.(file)) found.push(`${file}:${i + 1} ${r.name}`);
  });
  return found;
}

describe('tests decide on events and bounds, not on times', () => {
  const self = path.relative(root, here);

  it('finds no time measured, elapsed or used as a deadline in any test file', () => {
    const files = [...testFiles(path.join(root, 'src')), ...testFiles(path.join(root, 'test'))]
      .map((f) => path.relative(root, f))
      .filter((f) => f !== self);
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => timeVerdicts(f, readFileSync(path.join(root, f), 'utf8')))).toEqual([]);
  });

  it('catches each kind of time verdict (the scan itself can fail)', () => {
    const f = 'test/x.test.ts';
    expect(
      timeVerdicts(
        f,
        [
          'const t0 = performance.now();',
          'const took = process.hrtime.bigint() - t0;',
          "spawnChildNode({ ...env, LOOP_MONITOR: '1' });",
          'const cpu = process.cpuUsage(before);',
          'const worstMs = Date.now() - started;',
          'while (Date.now() < until) await tick();',
          'const startedAt = new Date(Date.now() - 60_000);',
          'const at = new Date(Date.now() - n * 60_000);',
          '// performance.now() in a comment is not a measure',
        ].join('\n'),
      ),
    ).toEqual([
      `${f}:1 performance.now()`,
      `${f}:2 process.hrtime`,
      `${f}:3 event-loop monitor`,
      `${f}:4 CPU time`,
      `${f}:5 elapsed time from the clock`,
      `${f}:6 clock deadline`,
    ]);
  });
});
