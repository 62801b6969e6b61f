/**
 * `node --import tsx bench/harness/verify-results.ts`: exits 0 when the committed bench/results/latest.*
 * were measured on the commit they name with nothing but results changed since (tree.ts verifyResults).
 */
import { projectRoot } from './paths.js';
import { verifyResults } from './tree.js';

const r = verifyResults(projectRoot);
if (r.problems.length) {
  process.stderr.write(`committed results (${r.resultsCommit || 'none'}) do not match the code they name:\n  ${r.problems.join('\n  ')}\n`);
  process.exit(1);
}
process.stdout.write(`bench/results/latest.json (commit ${r.resultsCommit.slice(0, 12)}) measured ${r.measured.slice(0, 12)}; only results changed in between\n`);
