/**
 * Global teardown of both jest projects (jest.config.js): what this run's tests left in Redis (the single
 * server and the cluster) and in the tests' MongoDB-protocol server is removed, found by the run's tag
 * (scripts/test-cleanup.mjs), so the local services a developer keeps between runs do not grow with every
 * `npm test`. A failure here is reported, not fatal: the tests already ran.
 */
export default async function globalTeardown(): Promise<void> {
  const tag = process.env.TEST_RUN_TAG;
  if (!tag) return;
  const { dropRunKeys, dropRunDatabases } = await import('../../scripts/test-cleanup.mjs');
  const urls = [process.env.TEST_REDIS_URL, process.env.TEST_REDIS_CLUSTER_URL].filter((u): u is string => !!u);
  const mongo = process.env.TEST_MONGODB_URI;
  const results = await Promise.allSettled([
    ...urls.map((u) => dropRunKeys(u, tag)),
    ...(mongo ? [dropRunDatabases(mongo, tag)] : []),
  ]);
  for (const r of results)
    if (r.status === 'rejected') process.stderr.write(`test teardown: ${(r.reason as Error).message}\n`);
}
