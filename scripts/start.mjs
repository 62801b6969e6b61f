// `npm start`: runs on a supported Node.js (fetched once when the machine's is outside engines,
// scripts/node-line.mjs), installs what is missing, compiles src/ into dist/ when the sources changed
// since the last build, starts the local services (Redis, a MongoDB-protocol server) unless REDIS_URL
// or MONGODB_URI name others, then runs every role of the service in one process on port 8080 with the
// demo tenant, as compiled JavaScript with plain `node`. The demo listens on loopback (HOST, GRPC_HOST
// 127.0.0.1) unless told otherwise: its users' password is published and its gRPC is plaintext.
// `npm run dev` (--dev) does the same but runs the TypeScript sources through tsx, with no build.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { NODE_FLAGS } from './node-flags.mjs';
import { runOnSupportedNode } from './node-line.mjs';

// Settings from .env (see .env.example); variables already in the environment win.
if (existsSync('.env')) process.loadEnvFile('.env');
await runOnSupportedNode('start');

const { ensureBuiltAssets, ensureNodeModules, ensureServices, whoListens, ServiceError } =
  await import('./services.mjs');
const { ensureBuilt } = await import('./build.mjs');

const dev = process.argv.includes('--dev');
const port = Number(process.env.PORT || 8080);
const listening = await whoListens(port);
if (listening === 'ours') {
  process.stdout.write(
    `[start] the service is already running on port ${port}; nothing to do (another instance: PORT, GRPC_PORT, METRICS_PORT and its own prefixes, docs/running.md).\n` +
      `        curl -H 'Host: demo.localhost:${port}' http://127.0.0.1:${port}/api/tenant/ping\n`,
  );
  process.exit(0);
}
if (listening === 'other') {
  process.stderr.write(`[start] port ${port} is used by another program: stop it or run with PORT=<free port>\n`);
  process.exit(1);
}
// The other listeners of a node with every role: a port that is taken fails here, by name, instead of
// inside the node (or, for gRPC, not at all where the port is shared).
const roles = (process.env.ROLES || 'http,hub,actors,workers,telemetry,idp').split(',').map((r) => r.trim());
const others = [['METRICS_PORT', 9464]];
if (roles.includes('telemetry')) others.push(['GRPC_PORT', 50051]);
for (const [name, fallback] of others) {
  const p = Number(process.env[name] || fallback);
  if (p !== 0 && (await whoListens(p)) !== null) {
    process.stderr.write(`[start] port ${p} (${name}) is used by another program: run with ${name}=<free port>\n`);
    process.exit(1);
  }
}

try {
  ensureNodeModules();
  if (!dev) {
    const b = await ensureBuilt();
    if (b.built) process.stderr.write(`[start] compiled src/ into dist/ (${b.modules} modules, ${b.ms} ms)\n`);
  }
  ensureBuiltAssets({ compiled: !dev });
  const s = await ensureServices();
  process.env.REDIS_URL ??= s.redisUrl;
  process.env.MONGODB_URI ??= s.mongoUri;
} catch (e) {
  if (e instanceof ServiceError) {
    process.stderr.write(`[start] cannot start: ${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
process.env.SEED_DEMO ??= 'true';
if (!process.env.HOST) process.env.HOST = '127.0.0.1';
// With the flags every product node runs with (scripts/node-flags.mjs, decision 1141).
const entry = [...NODE_FLAGS, ...(dev ? ['--import', 'tsx', 'src/main.ts'] : ['dist/main.js'])];
const child = spawn(process.execPath, entry, { stdio: 'inherit', env: process.env });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
