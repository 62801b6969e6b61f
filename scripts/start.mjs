// `npm start`: installs what is missing, compiles src/ into dist/ when the sources changed since the
// last build, starts the local services (Redis, a MongoDB-protocol server), then runs every role of the
// service in one process on port 8080 with the demo tenant, as compiled JavaScript with plain `node`.
// `npm run dev` (--dev) does the same but runs the TypeScript sources through tsx, with no build.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ensureBuiltAssets, ensureNodeModules, ensureServices, whoListens, ServiceError } from './services.mjs';
import { ensureBuilt } from './build.mjs';

const dev = process.argv.includes('--dev');

// Settings from .env (see .env.example); variables already in the environment win.
if (existsSync('.env')) process.loadEnvFile('.env');
const port = Number(process.env.PORT || 8080);
const listening = await whoListens(port);
if (listening === 'ours') {
  process.stdout.write(
    `[start] the service is already running on port ${port}; nothing to do.\n` +
      `        curl -H 'Host: demo.localhost:${port}' http://127.0.0.1:${port}/api/tenant/ping\n`,
  );
  process.exit(0);
}
if (listening === 'other') {
  process.stderr.write(`[start] port ${port} is used by another program: stop it or run with PORT=<free port>\n`);
  process.exit(1);
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
const entry = dev ? ['--import', 'tsx', 'src/main.ts'] : ['dist/main.js'];
const child = spawn(process.execPath, entry, { stdio: 'inherit', env: process.env });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
