// `npm start`: installs what is missing, starts the local services (Redis, a MongoDB-protocol
// server), then runs every role of the service in one process on port 8080 with the demo tenant.
import { spawn } from 'node:child_process';
import { ensureNodeModules, ensureServices, ServiceError } from './services.mjs';

try {
  ensureNodeModules();
  const s = await ensureServices();
  process.env.REDIS_URL ??= s.redisUrl;
  process.env.MONGODB_URI ??= s.mongoUri;
} catch (e) {
  if (e instanceof ServiceError) {
    process.stderr.write(`[start] cannot start the local services: ${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
process.env.SEED_DEMO ??= 'true';
const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { stdio: 'inherit', env: process.env });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
