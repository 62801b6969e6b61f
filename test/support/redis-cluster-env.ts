/**
 * Runs before each test file of the `redis-cluster` jest project: the file's nodes (and the child
 * processes it spawns) use the Redis Cluster where the other project gives them the single Redis.
 * Jest gives each test file its own copy of process.env, so other files are not affected.
 */
const url = process.env.TEST_REDIS_CLUSTER_URL;
if (!url?.startsWith('redis+cluster://') && !url?.startsWith('rediss+cluster://'))
  throw new Error('the redis-cluster project needs TEST_REDIS_CLUSTER_URL (a redis+cluster:// URL)');
process.env.TEST_REDIS_URL = url;
