/**
 * The committed results are of the committed code: a full run records the commit it measured and
 * refuses to write latest.* from a tree with changes (tracked or untracked, git-ignored files aside),
 * and `verifyResults` checks afterwards that the commit holding latest.* changed nothing but results
 * on top of the commit it names (decision 020).
 */
import { execFileSync } from 'node:child_process';

export interface TreeState {
  /** Full hash of HEAD, or 'unknown' outside a git checkout. */
  commit: string;
  /** `git status --porcelain` lines: what differs from HEAD (empty when clean). */
  changes: string[];
}

function git(dir: string, args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function treeState(dir: string): TreeState {
  try {
    const commit = git(dir, ['rev-parse', 'HEAD']).trim();
    const changes = git(dir, ['status', '--porcelain=v1', '--untracked-files=normal'])
      .split('\n')
      .filter((l) => l.trim());
    return { commit, changes };
  } catch {
    return { commit: 'unknown', changes: ['not a git checkout'] };
  }
}

export class DirtyTreeError extends Error {}

export type OutputBase = string;

/**
 * Names a selection's results may be committed under (`BENCH_RESULTS=hospital` writes hospital.*).
 * `runtime-compiled` and `runtime-tsx`: the same selection with product nodes compiled and through
 * tsx (decision 980); the name must match the run's BENCH_RUNTIME. `structure`: B1-B5 after the layers'
 * restructure (issue 19), beside the full run's figures before it. `reconnect-storm`: B12 at its full size
 * (issue 35, decision 1085); `reconnect-storm-2500` and `reconnect-storm-5000`: B12 at the sizes below it
 * (`BENCH_B12_CONNECTIONS`), to show how the storm scales on the machine that measured it.
 * `supported-line`: every benchmark on the product's supported Node.js line alone (`BENCH_NODE_LINES=24`),
 * a whole run in about half the time of both lines' (which stays latest.*).
 */
export const NAMED_RESULTS = [
  'hospital',
  'runtime-compiled',
  'runtime-tsx',
  'structure',
  'reconnect-storm',
  'reconnect-storm-2500',
  'reconnect-storm-5000',
  'supported-line',
];

/**
 * Which results files a run writes: quick.* for `--quick`, partial.* for a selection, latest.* for a
 * full run of every benchmark from a clean tree at a known commit, or `<name>.*` (NAMED_RESULTS) for a
 * selection from a clean tree. Either from a changed tree is refused (DirtyTreeError) unless
 * `allowDirty`, and then writes partial.* (never a committed name).
 */
export function outputBase(a: {
  quick: boolean;
  selection: boolean;
  tree: TreeState;
  allowDirty: boolean;
  name?: string;
  /** How the run's product nodes run (compiled.ts); a `runtime-*` name must say the same. */
  runtime?: string;
}): OutputBase {
  if (a.quick) return 'quick';
  if (a.name !== undefined && !NAMED_RESULTS.includes(a.name))
    throw new Error(`BENCH_RESULTS must be one of ${NAMED_RESULTS.join(', ')}`);
  if (a.name?.startsWith('runtime-') && a.name !== `runtime-${a.runtime ?? 'compiled'}`)
    throw new Error(`BENCH_RESULTS=${a.name} needs BENCH_RUNTIME=${a.name.slice('runtime-'.length)}`);
  if (a.selection && a.name === undefined) return 'partial';
  const target = a.name ?? 'latest';
  if (a.tree.commit === 'unknown' || a.tree.changes.length) {
    if (a.allowDirty) return 'partial';
    throw new DirtyTreeError(
      `refusing to write bench/results/${target}.* from a tree that differs from commit ${a.tree.commit}:\n  ${a.tree.changes.slice(0, 20).join('\n  ')}\n` +
        'commit (or remove) the changes first, or set BENCH_ALLOW_DIRTY=1 to write partial.* instead',
    );
  }
  return target;
}

/** Files a results commit may change on top of the commit it measured. */
export const RESULT_FILES = [
  'bench/results/latest.json',
  'bench/results/latest.md',
  'bench/results/hospital.json',
  'bench/results/hospital.md',
  'bench/results/runtime-compiled.json',
  'bench/results/runtime-compiled.md',
  'bench/results/runtime-tsx.json',
  'bench/results/runtime-tsx.md',
  'bench/results/structure.json',
  'bench/results/structure.md',
  'bench/results/reconnect-storm.json',
  'bench/results/reconnect-storm.md',
  'bench/results/reconnect-storm-2500.json',
  'bench/results/reconnect-storm-2500.md',
  'bench/results/reconnect-storm-5000.json',
  'bench/results/reconnect-storm-5000.md',
  'bench/results/supported-line.json',
  'bench/results/supported-line.md',
  'docs/performance.md',
];

/**
 * Checks the commit that last changed bench/results/latest.json: the commit the file names (the code
 * measured, from a clean tree) is one of its ancestors, and the results commit itself changed nothing
 * but RESULT_FILES. Main is shared, so other commits may land between the measured commit and the
 * results commit (a rebase before landing); they are listed in `landedBetween`, not refused. Returns
 * the problems (empty when the committed results are of the commit they name).
 */
export function verifyResults(
  dir: string,
  file = 'bench/results/latest.json',
): { measured: string; resultsCommit: string; landedBetween: string[]; problems: string[] } {
  const resultsCommit = git(dir, ['log', '-1', '--format=%H', '--', file]).trim();
  if (!resultsCommit)
    return { measured: '', resultsCommit: '', landedBetween: [], problems: [`${file} is not committed`] };
  const report = JSON.parse(git(dir, ['show', `${resultsCommit}:${file}`])) as {
    machine?: { commit?: string; treeChanges?: string[] };
  };
  const measured = report.machine?.commit ?? '';
  const problems: string[] = [];
  if (!/^[0-9a-f]{40}$/.test(measured))
    return {
      measured,
      resultsCommit,
      landedBetween: [],
      problems: [`${file} names no full commit hash (${measured || 'none'})`],
    };
  if (report.machine?.treeChanges?.length)
    problems.push(`the run measured a tree with changes: ${report.machine.treeChanges.join(', ')}`);
  try {
    git(dir, ['merge-base', '--is-ancestor', measured, resultsCommit]);
  } catch {
    problems.push(`the measured commit ${measured} is not an ancestor of the results commit ${resultsCommit}`);
    return { measured, resultsCommit, landedBetween: [], problems };
  }
  const own = git(dir, ['diff-tree', '--no-commit-id', '--name-only', '-r', resultsCommit]).split('\n').filter(Boolean);
  const other = own.filter((f) => !RESULT_FILES.includes(f));
  if (other.length) problems.push(`the results commit also changed: ${other.join(', ')}`);
  const landedBetween =
    measured === resultsCommit
      ? []
      : git(dir, ['log', '--format=%h %s', `${measured}..${resultsCommit}^`])
          .split('\n')
          .filter(Boolean);
  return { measured, resultsCommit, landedBetween, problems };
}
