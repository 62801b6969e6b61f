/**
 * Global set-up of the `redis-cluster` jest project (jest.config.js): a Redis Cluster in
 * TEST_REDIS_CLUSTER_URL: as given (`npm test` sets it), else the local three-master cluster
 * (scripts/redis-cluster.mjs, started if needed on LOCAL_REDIS_CLUSTER_PORT and the two ports after it).
 * When this project runs alone, the other services come from the project's local ones, as in
 * global-setup.ts.
 */
export default async function redisClusterSetup(): Promise<void> {
  (await import('../../scripts/test-cleanup.mjs')).ensureRunTag();
  if (!process.env.TEST_REDIS_URL || !process.env.TEST_MONGODB_URI) {
    // @ts-expect-error plain ESM script without types
    const { ensureServices } = await import('../../scripts/services.mjs');
    const s = (await ensureServices({ tests: true })) as { redisUrl: string; mongoUri: string };
    process.env.TEST_REDIS_URL ??= s.redisUrl;
    process.env.TEST_MONGODB_URI ??= s.mongoUri;
  }
  if (process.env.TEST_REDIS_CLUSTER_URL) return;
  // @ts-expect-error plain ESM script without types
  const { ensureRedisCluster } = await import('../../scripts/redis-cluster.mjs');
  process.env.TEST_REDIS_CLUSTER_URL = (await ensureRedisCluster()) as string;
}
