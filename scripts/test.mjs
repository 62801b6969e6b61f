// `npm test`: runs on a supported Node.js (fetched once when the machine's is outside engines,
// scripts/node-line.mjs), sets up what the suite needs, then runs it. The set-up's independent steps run
// side by side, each announced with its time when it ends: the Debian packages (redis-server, chromium:
// one apt-get run), then the local services; the npm packages, then the build (dist/, the browser
// bundles, the client SDK); the Python tools the tests use as outside clients.
// `npm run test:all` (--all) also runs the slowest, rarely-changing checks (SLOW_TESTS: the chart against
// the Kubernetes schemas, the S3 server contract, the chaos run) in a second jest run; their tools (helm,
// kubeconform and versitygw built with Go, the schemas) install at low priority while the first runs.
// Then, alone, the fleet day (decision 1080: a compressed day of a fleet over three nodes, then on the
// Redis Cluster).
// The tests' MongoDB-protocol server is TEST_MONGODB_URI when set, else the project's test server
// (mongo-java-server, memory backend, on LOCAL_TEST_MONGO_PORT 27028), never `npm start`'s database.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { runOnSupportedNode } from './node-line.mjs';

await runOnSupportedNode('test');

const {
  aptInstallAsync,
  ensureHelm,
  ensureKubeconform,
  ensureKubernetesSchemas,
  ensureNodeBinary,
  ensureVersitygw,
  localDir,
  nodeModulesStale,
  PYTHON_TOOLS,
  ServiceError,
  which,
} = await import('./services.mjs');

/**
 * The checks only `npm run test:all` runs (decision 1061): their tools take minutes to build on a fresh
 * machine and they change rarely. The chaos run is the resilience suite's longest file (and runs again
 * on the Redis Cluster); `npm run test:soak` is its ten-minute form.
 */
const SLOW_TESTS = [
  'test/contract/helm-chart.test.ts',
  'test/integration/storage/versitygw.test.ts',
  'test/resilience/faults/chaos.test.ts',
];

const all = process.argv.includes('--all');
// --setup: the set-up alone (to install everything ahead, or to time it).
const setupOnly = process.argv.includes('--setup');
const args = process.argv.slice(2).filter((a) => a !== '--all' && a !== '--setup');
const whole = args.length === 0;
const began = Date.now();

const clock = () => {
  const s = Math.round((Date.now() - began) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
const say = (line) => process.stderr.write(`[test] ${clock()} ${line}\n`);

/** Runs `fn` (a promise-returning step) and prints one line with its time when it ends. */
async function phase(name, fn) {
  const t = Date.now();
  const out = await fn();
  say(`${name}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return out;
}

/** Runs a command without blocking the other steps; resolves to its stdout, rejects with a ServiceError. */
function run(cmd, argv, what, { env = process.env, capture = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { env, stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'] });
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.once('error', (e) => reject(new ServiceError(`${what}: ${e.message}`)));
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new ServiceError(`${what} failed (exit ${code}; see output above)`)),
    );
  });
}

const node = (argv, what, opts) => run(process.execPath, argv, what, opts);

async function debianPackages() {
  const missing = [];
  if (!which('redis-server')) missing.push('redis-server');
  if (whole && !process.env.CHROMIUM_PATH && !which('chromium')) missing.push('chromium');
  if (missing.length) await aptInstallAsync(...missing);
  return missing;
}

async function services() {
  const out = await node(['scripts/services.mjs', '--tests'], 'starting the services', { capture: true });
  // The settings are its last JSON line (a tool it ran may have printed before it).
  const s = JSON.parse(
    /\{"redisUrl".*\}/.exec(out.split('\n').findLast((l) => l.includes('{"redisUrl"')) ?? '')?.[0] ?? 'null',
  );
  if (!s) throw new ServiceError(`the services printed no settings: ${out.slice(-400)}`);
  process.env.TEST_REDIS_URL ??= s.redisUrl;
  process.env.TEST_MONGODB_URI ??= s.mongoUri;
}

async function redisCluster() {
  // The multi-node tests run again on a three-master Redis Cluster (jest project redis-cluster, decision 860).
  if (process.env.TEST_REDIS_CLUSTER_URL) return;
  const out = await node(['scripts/redis-cluster.mjs'], 'starting the Redis Cluster', { capture: true });
  const url = /redis\+cluster:\/\/\S+/.exec(out.split('\n').findLast((l) => l.includes('redis+cluster://')) ?? '');
  if (!url) throw new ServiceError(`the Redis Cluster printed no URL: ${out.slice(-400)}`);
  process.env.TEST_REDIS_CLUSTER_URL = url[0];
}

async function npmPackages() {
  if (!nodeModulesStale()) return;
  await run('npm', ['install', '--no-audit', '--no-fund'], 'npm install');
}

function sdkBuildInfo() {
  const info = path.join(localDir, 'client-sdk.tsbuildinfo');
  if (!existsSync('packages/client/dist/index.js')) rmSync(info, { force: true });
  return info;
}

async function build() {
  // The compiled service (dist/, decision 830) that test/e2e/compiled and the chaos nodes run, then its
  // browser bundles; beside them, the client SDK workspace package, which builds on its own (its e2e
  // journeys run from its sources), incrementally from a build-info file dropped when its output is gone.
  const { ensureBuilt } = await import('./build.mjs');
  await Promise.all([
    ensureBuilt().then(() =>
      node(['dist/http/reference/graphiql.build.cli.js'], 'building the GraphQL explorer bundle', { capture: true }),
    ),
    node(
      [
        'node_modules/typescript/bin/tsc',
        ...['-p', 'packages/client/tsconfig.json', '--incremental', '--tsBuildInfoFile', sdkBuildInfo()],
      ],
      'building packages/client',
    ),
  ]);
}

/** helm, kubeconform, versitygw (Go builds, nice'd so they take what the tests leave) and the schemas. */
async function slowTools() {
  await Promise.all([ensureVersitygw(), ensureHelm(), ensureKubeconform()]);
  ensureKubernetesSchemas(['1.30.0', '1.37.0']);
}

let tools;
try {
  const debs = phase('Debian packages', debianPackages);
  const code = phase('npm packages', npmPackages).then(() => phase('build', build));
  const steps = [code, debs.then(() => phase('services', services)).then(() => phase('Redis Cluster', redisCluster))];
  if (whole)
    for (const tool of Object.keys(PYTHON_TOOLS))
      steps.push(phase(tool, () => node(['scripts/services.mjs', '--python-tool', tool], `installing ${tool}`)));
  if (all) {
    tools = phase('Go tools and Kubernetes schemas', slowTools);
    tools.catch(() => undefined);
  }
  await Promise.all(steps);
  // The compiled service's test runs it on this Node.js and on Node 24 (the image's), the same when this is 24.
  process.env.TEST_NODE24_BIN ??= ensureNodeBinary(24);
} catch (e) {
  if (e instanceof ServiceError) {
    process.stderr.write(`[test] cannot start the services the tests need: ${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
say(`set-up done; tests on Node.js ${process.version}`);
if (setupOnly) {
  if (tools) await tools;
  process.exit(0);
}

/** Runs jest on this Node.js; returns its exit status and the counts from its JSON results. */
async function runJest(jestArgs, resultsFile, env = process.env) {
  rmSync(resultsFile, { force: true });
  const status = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--experimental-vm-modules',
        '--no-warnings',
        'node_modules/jest/bin/jest.js',
        '--json',
        `--outputFile=${resultsFile}`,
        ...jestArgs,
      ],
      { stdio: 'inherit', env },
    );
    child.once('exit', (c) => resolve(c ?? 1));
  });
  const counts = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : undefined;
  return { status, counts };
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
 * The tests that failed, and the files that failed outside their tests (a handle left open, a failing
 * beforeAll), each with the first lines of its error: jest prints them far above the closing lines, where a
 * long log (the fleet day's figures) cuts them off.
 */
function outsideFailures(c) {
  const lines = [];
  for (const r of c?.testResults ?? []) {
    const file = path.relative(process.cwd(), r.name);
    const failed = (r.assertionResults ?? []).filter((a) => a.status === 'failed');
    // A failing test's own message (an assertion's diff names what broke), cut to what a log's tail keeps.
    for (const a of failed.slice(0, 10)) {
      lines.push(`  ${file} > ${a.fullName}: ${firstLines(a.failureMessages?.join('\n'), 40).slice(0, 3000)}`);
    }
    if (r.status !== 'failed' || failed.length) continue;
    lines.push(`  ${file}: ${firstLines(r.message, 2).slice(0, 400)}`);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** A jest message's first lines without colours, headings or stack frames, joined on one line each. */
function firstLines(message, count) {
  return (
    String(message ?? '')
      // eslint-disable-next-line no-control-regex
      .replace(/\u001b\[[0-9;]*m/g, '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('●') && !l.startsWith('at '))
      .slice(0, count)
      .join(' / ')
  );
}

const escape = (f) => `/${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
/**
 * The fleet day (decision 1080) runs last and alone in `test:all` (and in `npm test` with FLEET_DAY=1);
 * `npm test` leaves it out, `test:soak` runs its longer day.
 */
const FLEET_DAY = 'test/resilience/faults/fleet-day.test.ts';
const firstArgs = whole
  ? ['--testPathIgnorePatterns', '/node_modules/', ...[...SLOW_TESTS, FLEET_DAY].map(escape)]
  : args;
const jestStarted = Date.now();
const runs = [await runJest(firstArgs, path.join(localDir, 'jest-results.json'))];
say(
  `${whole ? 'suite' : 'tests'}: ${runs[0].counts ? summary(runs[0].counts) : 'no results'}, ${Math.round((Date.now() - jestStarted) / 1000)} s`,
);

if (all) {
  try {
    await tools;
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    process.stderr.write(`[test] cannot install the slow checks' tools: ${e.message}\n`);
    process.exit(1);
  }
  const slowStarted = Date.now();
  runs.push(await runJest(SLOW_TESTS, path.join(localDir, 'jest-results-slow.json')));
  say(
    `slow checks: ${runs[1].counts ? summary(runs[1].counts) : 'no results'}, ${Math.round((Date.now() - slowStarted) / 1000)} s`,
  );
}

// The fleet day (decision 1080): three nodes and a fleet of clients, then again on the Redis Cluster, one
// after the other and alone on the machine (each day is a whole cluster under load).
if (whole && (all || process.env.FLEET_DAY === '1')) {
  const dayStarted = Date.now();
  const day = await runJest(['--runInBand', FLEET_DAY], path.join(localDir, 'jest-results-fleet-day.json'), {
    ...process.env,
    FLEET_DAY: '1',
  });
  runs.push(day);
  say(
    `fleet day: ${day.counts ? summary(day.counts) : 'no results'}, ${Math.round((Date.now() - dayStarted) / 1000)} s`,
  );
}

// The closing line: every run together.
const closing = { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numRuntimeErrorTestSuites: 0 };
let status = 0;
for (const r of runs) {
  if (r.status !== 0 || !r.counts) status = r.status || 1;
  if (r.counts) for (const k of Object.keys(closing)) closing[k] += r.counts[k];
}
process.stdout.write(`\n${runs.map((r) => outsideFailures(r.counts)).join('')}${summary(closing)}\n`);
process.exit(status);
