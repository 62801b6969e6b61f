import type { Infra } from '../app/index.js';
import type { Config } from '../config/config.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { Mongo } from '../data/mongo.js';
import { createRedis, type RedisClient, type RedisConnectionOptions } from '../data/redis.js';
import { redisKeys, type RedisKeys } from '../data/redis-keys.js';
import { CareTeamStore } from '../data/stores/care-team.store.js';
import { createObjectStore, type ObjectStore } from '../storage/index.js';
import { createJobQueues, type JobQueues } from '../data/job-queues.js';
import { QrRenderer } from '../qr/qr-renderer.js';

export async function createInfra(
  config: Config,
  overrides: Partial<Pick<Infra, 'logger' | 'metrics'>> = {},
): Promise<Infra> {
  const logger = overrides.logger ?? createLogger({ level: config.log.level, nodeId: config.nodeId });
  const metrics = overrides.metrics ?? new Metrics({ node: config.nodeId });
  const redis = createRedis(config.redis.url, 'main');
  redis.on('error', (err) => logger.warn({ component: 'redis', err: err.message }, 'redis error'));
  const mongo = await Mongo.connect(config.mongo);
  const keys = redisKeys(config.redis.prefix, { cluster: config.redis.cluster });
  // Every process that writes to a tenant's database marks its care-team writes, whether or not it reads
  // the cache itself: no entrance can change a care team past the cache (decision 1132).
  mongo.onCareTeamWrites(new CareTeamStore({ redis, keys, ttlSeconds: config.careTeamCache.ttlSeconds }));
  const store = await createObjectStore(config.storage);
  return {
    config,
    logger,
    metrics,
    mongo,
    redis,
    keys,
    store,
    queues: createJobQueues(config),
    qr: new QrRenderer(),
    connectRedis: (name, options) => createRedis(config.redis.url, name, options),
  };
}

export async function closeInfra(infra: Infra): Promise<void> {
  await infra.qr.close();
  await infra.queues.close();
  await Promise.allSettled([infra.redis.quit(), infra.mongo.close()]);
  infra.store.close?.();
}
