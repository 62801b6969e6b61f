// `npm run bench [-- b06] [--quick] [--profile b06]`: makes sure the local services run, then starts the
// benchmark harness (bench/harness/main.ts) with their addresses. See docs/performance.md.
import { spawn } from 'node:child_process';
import { ensureServices, ServiceError } from './services.mjs';

try {
  const s = await ensureServices();
  process.env.REDIS_URL ??= s.redisUrl;
  process.env.MONGODB_URI ??= s.mongoUri;
} catch (e) {
  if (e instanceof ServiceError) {
    process.stderr.write(`[bench] cannot start the local services: ${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
const child = spawn(process.execPath, ['--import', 'tsx', 'bench/harness/main.ts', ...process.argv.slice(2)], { stdio: 'inherit', env: process.env });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
