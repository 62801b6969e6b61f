/**
 * `node --import tsx bench/harness/verify-results.ts [bench/results/hospital.json]`: exits 0 when the committed bench/results/latest.*
 * were measured, from a clean tree, on a commit that is an ancestor of the results commit, and that the
 * results commit changed only results (tree.ts verifyResults); lists what landed in between.
 */
import { projectRoot } from './paths.js';
import { verifyResults } from './tree.js';

const r = verifyResults(projectRoot, process.argv[2] ?? 'bench/results/latest.json');
if (r.problems.length) {
  process.stderr.write(
    `committed results (${r.resultsCommit || 'none'}) do not match the code they name:\n  ${r.problems.join('\n  ')}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `${process.argv[2] ?? 'bench/results/latest.json'} (commit ${r.resultsCommit.slice(0, 12)}) measured ${r.measured.slice(0, 12)} from a clean tree; the results commit changed only results` +
    `${r.landedBetween.length ? `; landed in between (not measured):\n  ${r.landedBetween.join('\n  ')}` : ''}\n`,
);
