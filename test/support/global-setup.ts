import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';

/** True when a Docker engine answers on its socket (developer laptops, hosted CI). */
async function dockerReachable(): Promise<boolean> {
  const socketPath = process.env.DOCKER_HOST?.startsWith('unix://')
    ? process.env.DOCKER_HOST.slice(7)
    : '/var/run/docker.sock';
  if (!process.env.DOCKER_HOST && !existsSync(socketPath)) return false;
  return new Promise((resolve) => {
    const req = http.request({ socketPath, path: '/_ping', timeout: 1000 }, (res) => resolve(res.statusCode === 200));
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

/**
 * Real services for the whole run, chosen in this order: TEST_REDIS_URL and TEST_MONGODB_URI when both
 * are set (`npm test` sets them); testcontainers (MongoDB, Redis) where a Docker engine answers (unless
 * TEST_USE_DOCKER=0); otherwise the project's local services (scripts/services.mjs): Redis, and the
 * tests' own MongoDB-protocol server (mongo-java-server in memory on LOCAL_TEST_MONGO_PORT, 27028), never
 * the database `npm start` uses. Tests read TEST_* variables; the Redis URL carries its credentials.
 */
export default async function globalSetup(): Promise<void> {
  (await import('../../scripts/test-cleanup.mjs')).ensureRunTag();
  if (process.env.TEST_REDIS_URL && process.env.TEST_MONGODB_URI) return;
  if (process.env.TEST_USE_DOCKER !== '0' && (await dockerReachable())) {
    const { GenericContainer, Wait } = await import('testcontainers');
    // Password-protected like the local Redis and production: an ACL user, the default user off.
    const password = randomBytes(18).toString('base64url');
    const redis = await new GenericContainer('redis:7-alpine')
      .withCommand([
        'redis-server',
        '--maxmemory-policy',
        'noeviction',
        '--user',
        'default',
        'off',
        '--user',
        'consult',
        'on',
        `>${password}`,
        '~*',
        '&*',
        '+@all',
      ])
      .withExposedPorts(6379)
      .start();
    const mongo = await new GenericContainer('mongo:7')
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
      .start();
    process.env.TEST_REDIS_URL = `redis://consult:${password}@${redis.getHost()}:${redis.getMappedPort(6379)}`;
    process.env.TEST_MONGODB_URI = `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}/`;
    return;
  }
  // @ts-expect-error plain ESM script without types
  const { ensureServices } = await import('../../scripts/services.mjs');
  const s = (await ensureServices({ tests: true })) as { redisUrl: string; mongoUri: string };
  process.env.TEST_REDIS_URL = s.redisUrl;
  process.env.TEST_MONGODB_URI = s.mongoUri;
}
