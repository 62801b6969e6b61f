// `npm test`: installs what is missing, starts the local services, then runs the whole suite.
import { spawnSync } from 'node:child_process';
import { ensureNodeModules, ensureServices, ServiceError } from './services.mjs';

try {
  ensureNodeModules();
  const s = await ensureServices();
  process.env.TEST_REDIS_URL ??= s.redisUrl;
  process.env.TEST_MONGODB_URI ??= s.mongoUri;
} catch (e) {
  if (e instanceof ServiceError) {
    process.stderr.write(`[test] cannot start the services the tests need: ${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
const args = process.argv.slice(2);
const r = spawnSync(process.execPath, ['--experimental-vm-modules', '--no-warnings', 'node_modules/jest/bin/jest.js', ...args], { stdio: 'inherit', env: process.env });
process.exit(r.status ?? 1);
