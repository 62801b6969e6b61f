/**
 * The benchmark harness's logic (no timing): statistics over rounds, the verdict rule (medians of at
 * least 3 rounds per side), round alternation, and the results' link to the committed code (a full
 * run refuses a changed tree; verifyResults checks a results commit against the commit it names).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { median, spreadFigures, verdictBlocker, MIN_VERDICT_ROUNDS } from '../../bench/harness/stats.js';
import { outcomeOf } from '../../bench/harness/verdict.js';
import { roundOrder } from '../../bench/harness/runner.js';
import { check } from '../../bench/harness/types.js';
import { treeState, outputBase, DirtyTreeError, verifyResults } from '../../bench/harness/tree.js';
import { markdown } from '../../bench/harness/report.js';
import { benchNodeLines } from '../../bench/harness/node-lines.js';

const bench = {
  id: 'bx',
  title: 't',
  target: 'p99 <= 50 ms; >= 80% of baseline',
  baselineName: 'bare',
  rounds: 3,
  settings: {},
  ratioFigure: 'rate',
  checks: (p: Record<string, number>, _b: unknown, ratio: number | null) => [
    check('p99', p.p99_ms, 'max', 50),
    check('ratio', ratio, 'min', 0.8),
  ],
};

describe('round statistics', () => {
  it('takes the middle value of an odd count and reports min/median/max per figure', () => {
    expect(median([3, 67, 5])).toBe(5);
    expect(spreadFigures([{ p99_ms: 3 }, { p99_ms: 67 }, { p99_ms: 5 }])).toEqual({
      p99_ms: { min: 3, median: 5, max: 67, n: 3 },
    });
  });

  it('the median of two rounds is their mean: a 67 ms round moves it, which is why verdicts need 3', () => {
    expect(median([3, 67])).toBe(35);
    expect(MIN_VERDICT_ROUNDS).toBe(3);
    expect(verdictBlocker({ product: [{}, {}], baseline: [{}, {}, {}] }, true)).toMatch(/2 product round/);
    expect(verdictBlocker({ product: [{}, {}, {}], baseline: [{}, {}] }, true)).toMatch(/2 baseline round/);
    expect(verdictBlocker({ product: [{}, {}, {}], baseline: [] }, false)).toBeNull();
  });

  it('alternates which side goes first', () => {
    expect([0, 1, 2, 3].map(roundOrder)).toEqual([
      ['product', 'baseline'],
      ['baseline', 'product'],
      ['product', 'baseline'],
      ['baseline', 'product'],
    ]);
  });
});

describe('verdict', () => {
  const baseline = [{ rate: 100 }, { rate: 90 }, { rate: 110 }];

  it('passes on the medians of 3 rounds although one round was slow', () => {
    const o = outcomeOf(
      bench,
      {
        product: [
          { p99_ms: 20, rate: 85 },
          { p99_ms: 67, rate: 40 },
          { p99_ms: 30, rate: 95 },
        ],
        baseline,
      },
      { hasBaseline: true, durationMs: 1 },
    );
    expect(o.product).toEqual({ p99_ms: 30, rate: 85 });
    expect(o.ratio).toBe(0.85);
    expect(o.spread!.product.p99_ms).toEqual({ min: 20, median: 30, max: 67, n: 3 });
    expect(o.pass).toBe(true);
  });

  it('fails when the median misses a target', () => {
    const o = outcomeOf(
      bench,
      {
        product: [
          { p99_ms: 60, rate: 85 },
          { p99_ms: 67, rate: 90 },
          { p99_ms: 30, rate: 95 },
        ],
        baseline,
      },
      { hasBaseline: true, durationMs: 1 },
    );
    expect(o.checks.find((c) => c.name === 'p99')).toMatchObject({ value: 60, pass: false });
    expect(o.pass).toBe(false);
  });

  it('takes no verdict on 2 rounds, even when their mean would pass', () => {
    const o = outcomeOf(
      bench,
      {
        product: [
          { p99_ms: 20, rate: 95 },
          { p99_ms: 67, rate: 95 },
        ],
        baseline: baseline.slice(0, 2),
      },
      { hasBaseline: true, durationMs: 1 },
    );
    expect(o.status).toBe('measured');
    expect(o.pass).toBeNull();
    expect(o.reason).toMatch(/at least 3/);
  });

  it('takes no verdict after a failure, keeping the rounds measured', () => {
    const o = outcomeOf(
      bench,
      {
        product: [
          { p99_ms: 1, rate: 100 },
          { p99_ms: 1, rate: 100 },
          { p99_ms: 1, rate: 100 },
        ],
        baseline,
      },
      { hasBaseline: true, failure: 'Error: boom\n at x', durationMs: 1 },
    );
    expect(o).toMatchObject({ status: 'failed', reason: 'Error: boom', pass: null });
    expect(o.rounds.product).toHaveLength(3);
  });
});

describe('results belong to the committed code', () => {
  function repo(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-tree-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
    git('init', '-q');
    git('config', 'user.email', 'bench@example.test');
    git('config', 'user.name', 'bench');
    writeFileSync(path.join(dir, '.gitignore'), 'scratch/\n');
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'code');
    return dir;
  }
  const gitIn = (dir: string, ...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

  it('a full run from a clean tree writes latest.*; a selection writes partial.*, --quick quick.*', () => {
    const dir = repo();
    const tree = treeState(dir);
    expect(tree.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(tree.changes).toEqual([]);
    expect(outputBase({ quick: false, selection: false, tree, allowDirty: false })).toBe('latest');
    expect(outputBase({ quick: false, selection: true, tree, allowDirty: false })).toBe('partial');
    expect(outputBase({ quick: true, selection: false, tree, allowDirty: false })).toBe('quick');
    expect(outputBase({ quick: false, selection: true, tree, allowDirty: false, name: 'hospital' })).toBe('hospital');
    expect(() => outputBase({ quick: false, selection: true, tree, allowDirty: false, name: 'latest' })).toThrow(
      /BENCH_RESULTS/,
    );
  });

  it('refuses latest.* from a tree with a modified or an untracked file, not for git-ignored ones', () => {
    const dir = repo();
    mkdirSync(path.join(dir, 'scratch'));
    writeFileSync(path.join(dir, 'scratch', 'x'), 'ignored');
    expect(treeState(dir).changes).toEqual([]);
    writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 2;\n');
    const modified = treeState(dir);
    expect(modified.changes).toEqual([' M src/a.ts']);
    expect(() => outputBase({ quick: false, selection: false, tree: modified, allowDirty: false })).toThrow(
      DirtyTreeError,
    );
    expect(outputBase({ quick: false, selection: false, tree: modified, allowDirty: true })).toBe('partial');
    expect(() =>
      outputBase({ quick: false, selection: true, tree: modified, allowDirty: false, name: 'hospital' }),
    ).toThrow(/hospital\.\* from a tree/);
    gitIn(dir, 'checkout', '--', 'src/a.ts');
    writeFileSync(path.join(dir, 'src', 'b.ts'), 'export const b = 1;\n');
    expect(() => outputBase({ quick: false, selection: false, tree: treeState(dir), allowDirty: false })).toThrow(
      /differs from commit/,
    );
  });

  it('verifyResults accepts a results-only commit descending from the measured one, and refuses results committed with code', () => {
    const dir = repo();
    const measured = gitIn(dir, 'rev-parse', 'HEAD');
    // Another change lands on main between the run and the results commit (a rebase): listed, accepted.
    writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 2;\n');
    gitIn(dir, 'commit', '-q', '-am', 'landed meanwhile');
    mkdirSync(path.join(dir, 'bench', 'results'), { recursive: true });
    writeFileSync(
      path.join(dir, 'bench', 'results', 'latest.json'),
      JSON.stringify({ machine: { commit: measured, treeChanges: [] } }),
    );
    gitIn(dir, 'add', '-A');
    gitIn(dir, 'commit', '-q', '-m', 'results');
    const ok = verifyResults(dir);
    expect(ok).toMatchObject({ measured, problems: [] });
    expect(ok.landedBetween).toHaveLength(1);
    expect(ok.landedBetween[0]).toMatch(/landed meanwhile/);
    // Code changed after the results: still fine, the results commit is the one checked.
    writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 3;\n');
    gitIn(dir, 'commit', '-q', '-am', 'later code');
    expect(verifyResults(dir).problems).toEqual([]);
    // Results committed together with a code change: refused.
    writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 4;\n');
    writeFileSync(
      path.join(dir, 'bench', 'results', 'latest.json'),
      JSON.stringify({ machine: { commit: gitIn(dir, 'rev-parse', 'HEAD'), treeChanges: [] } }),
    );
    gitIn(dir, 'commit', '-q', '-am', 'results and code');
    expect(verifyResults(dir).problems.join()).toMatch(/results commit also changed: src\/a.ts/);
    // A commit name that is not an ancestor (edited by hand): refused.
    writeFileSync(
      path.join(dir, 'bench', 'results', 'latest.json'),
      JSON.stringify({ machine: { commit: 'f'.repeat(40), treeChanges: [] } }),
    );
    gitIn(dir, 'commit', '-q', '-am', 'results naming another commit');
    expect(verifyResults(dir).problems.join()).toMatch(/not an ancestor/);
  });
});

describe('Node.js releases side by side (issue 39 §9)', () => {
  const outcome = (node: string, ratio: number, pass: boolean) => ({
    id: 'b01',
    title: 't',
    target: 'x',
    baselineName: 'bare',
    status: 'measured' as const,
    settings: {},
    rounds: { product: [], baseline: [] },
    ratioFigure: 'throughput_per_s',
    ratio,
    checks: [],
    pass,
    durationMs: 1,
    node,
  });

  it('reports each benchmark once per release, with a table of ratios and verdicts per release', () => {
    const md = markdown({
      startedAt: 'a',
      finishedAt: 'b',
      durationS: 1,
      scale: 'full',
      selection: ['b01'],
      machine: {
        cpuModel: 'c',
        cores: 2,
        memoryMiB: 1,
        node: 'v20.20.2',
        commit: 'x',
        loadAverageAtStart: [0],
        servers: {},
      },
      settings: {},
      benchmarks: [outcome('v24.22.3', 0.52, false), outcome('v20.20.2', 0.61, false)],
    });
    expect(md).toContain('MiB, Node v24.22.3 and v20.20.2,');
    expect(md).toContain('| B01<br>Node 24.22.3 |');
    expect(md).toContain('| B01<br>Node 20.20.2 |');
    expect(md).toContain('| # | Node 24.22.3 | Node 20.20.2 |');
    expect(md).toContain('| B01 | 0.52 (throughput_per_s): fail | 0.61 (throughput_per_s): fail |');
  });

  it('reads BENCH_NODE_LINES: the machine release once when it is the shipped one, and refuses other names', () => {
    const self = benchNodeLines({ BENCH_NODE_LINES: 'machine,machine', MACHINE_NODE: process.execPath });
    expect(self).toEqual([{ label: 'machine', bin: process.execPath, version: process.version }]);
    expect(() => benchNodeLines({ BENCH_NODE_LINES: '18' })).toThrow(/not 24, 22 or machine/);
    expect(() => benchNodeLines({ BENCH_NODE_LINES: ' , ' })).toThrow(/names no Node.js line/);
  });
});
