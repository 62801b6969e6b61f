// `npm run bench [-- b06] [--quick] [--profile b06]`: runs on a supported Node.js (scripts/node-line.mjs),
// makes sure Redis runs, starts the benchmark's own
// MongoDB-protocol servers on free loopback ports under .local/bench/ (the embedded default,
// mongo-java-server H2 committing every write, on a fresh file; and the test server, mongo-java-server
// in memory), runs the harness (bench/harness/main.ts) with their addresses, and stops them at the end.
// The shared servers of `npm start` and `npm test` are never used, so a run measures what a fresh clone
// gets and no one else's data. BENCH_MONGODB_URI=<uri> measures an external server instead (both roles).
// BENCH_DB_CPUS=<list> (such as `1` or `2-3`) runs those servers on the CPUs listed and the harness, with
// every process it starts, on the others: the database on cores of its own, as deployed (decision 1182).
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runOnSupportedNode } from './node-line.mjs';

// The figures are of the line the product supports and ships (decision 1060), not of the machine's Node.js.
await runOnSupportedNode('bench');
const { ensureRedis, mongoJavaServerCommand, localDir, ServiceError } = await import('./services.mjs');

const log = (m) => process.stderr.write(`[bench] ${m}\n`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function accepts(port) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

const servers = [];

/** The CPUs of a `taskset` list (`1`, `0,2`, `2-3`); throws on anything else or a CPU this machine lacks. */
function cpuList(list, count) {
  const cpus = new Set();
  for (const part of String(list).split(',')) {
    const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
    if (!m) throw new ServiceError(`BENCH_DB_CPUS: '${list}' is not a CPU list such as 1 or 2-3`);
    const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])];
    for (let c = from; c <= to; c++) cpus.add(c);
  }
  const outside = [...cpus].filter((c) => c >= count);
  if (outside.length || !cpus.size || cpus.size >= count)
    throw new ServiceError(`BENCH_DB_CPUS: '${list}' must name some but not all of this machine's CPUs 0-${count - 1}`);
  return [...cpus].sort((a, b) => a - b);
}

/** `cmd args` run on `cpus` (through taskset) when given, else as is. */
function pinned(cpus, cmd, args) {
  return cpus ? ['taskset', ['-c', cpus.join(','), cmd, ...args]] : [cmd, args];
}

let dbCpus;
let otherCpus;

/** Starts one private mongo-java-server (`h2` on a fresh file, or `memory`) and waits for its port. */
async function startServer(backend, dir) {
  const port = await freePort();
  const file = path.join(dir, `bench-${port}.mv`);
  rmSync(file, { force: true });
  // BENCH_MONGO_JAVA_OPTS: JVM options for the run's servers, to measure a launcher setting side by side
  // (for example -Dmongo.h2.keyBytes=h2, decision 986).
  const jvm = (process.env.BENCH_MONGO_JAVA_OPTS ?? '').split(/\s+/).filter(Boolean);
  const [cmd, args] = pinned(dbCpus, ...mongoJavaServerCommand(backend, port, file, jvm));
  const out = openSync(path.join(dir, `mongo-java-server-${backend}-${port}.log`), 'a');
  const child = spawn(cmd, args, { stdio: ['ignore', out, out] });
  servers.push({ child, file });
  const until = Date.now() + 120_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null)
      throw new ServiceError(`mongo-java-server (${backend}) exited with ${child.exitCode}; see ${dir}`);
    if (Date.now() > until)
      throw new ServiceError(`mongo-java-server (${backend}) did not listen within 120 s; see ${dir}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  log(`mongo-java-server (${backend}) for this run on 127.0.0.1:${port}${dbCpus ? ` on CPUs ${dbCpus}` : ''}`);
  return `mongodb://127.0.0.1:${port}/`;
}

function stopServers() {
  for (const s of servers) {
    if (s.child.exitCode === null) s.child.kill('SIGTERM');
    rmSync(s.file, { force: true });
  }
}

let code = 1;
try {
  if (process.env.BENCH_DB_CPUS) {
    dbCpus = cpuList(process.env.BENCH_DB_CPUS, os.cpus().length);
    otherCpus = os
      .cpus()
      .map((_, i) => i)
      .filter((c) => !dbCpus.includes(c));
  }
  process.env.REDIS_URL ??= await ensureRedis();
  if (process.env.BENCH_MONGODB_URI) {
    process.env.BENCH_MONGO_EMBEDDED_URI = process.env.BENCH_MONGO_TEST_URI = process.env.BENCH_MONGODB_URI;
  } else {
    const dir = path.join(localDir, 'bench');
    mkdirSync(dir, { recursive: true });
    process.env.BENCH_MONGO_EMBEDDED_URI = await startServer('h2', dir);
    process.env.BENCH_MONGO_TEST_URI = await startServer('memory', dir);
  }
  process.env.MONGODB_URI = process.env.BENCH_MONGO_EMBEDDED_URI;
  if (otherCpus) {
    log(`the harness and every process it starts on CPUs ${otherCpus}`);
    process.env.BENCH_OTHER_CPUS = otherCpus.join(',');
  }
  const [cmd, args] = pinned(otherCpus, process.execPath, [
    '--import',
    'tsx',
    'bench/harness/main.ts',
    ...process.argv.slice(2),
  ]);
  const child = spawn(cmd, args, { stdio: 'inherit', env: process.env });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
} catch (e) {
  if (!(e instanceof ServiceError)) throw e;
  log(`cannot start the services: ${e.message}`);
} finally {
  stopServers();
}
process.exit(code);
