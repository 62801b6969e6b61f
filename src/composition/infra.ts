import type { Config } from '../config/config.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { Mongo } from '../data/mongo.js';
import { createRedis, type RedisClient, type RedisConnectionOptions } from '../data/redis.js';
import { redisKeys, type RedisKeys } from '../data/redis-keys.js';
import { createObjectStore, type ObjectStore } from '../storage/index.js';
import { createJobQueues, type JobQueues } from '../workers/job-queues.js';
import { QrRenderer } from '../qr/qr-renderer.js';

/** Connections to the outside world, created once per process and closed in order. */
export interface Infra {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  mongo: Mongo;
  /** One server or a Redis Cluster (REDIS_URL, decision 860). */
  redis: RedisClient;
  keys: RedisKeys;
  store: ObjectStore;
  /** BullMQ queues (enqueue side), on their own connection. */
  queues: JobQueues;
  /** The QR code renderer's worker thread (started on first render, stopped with the rest). */
  qr: QrRenderer;
  /**
   * A further Redis connection of its own (a subscriber, the Socket.IO adapter's, a BullMQ worker's), to
   * the same server as `redis`; the caller closes it.
   */
  connectRedis(name: string, options?: RedisConnectionOptions): RedisClient;
}

export async function createInfra(
  config: Config,
  overrides: Partial<Pick<Infra, 'logger' | 'metrics'>> = {},
): Promise<Infra> {
  const logger = overrides.logger ?? createLogger({ level: config.log.level, nodeId: config.nodeId });
  const metrics = overrides.metrics ?? new Metrics({ node: config.nodeId });
  const redis = createRedis(config.redis.url, 'main');
  redis.on('error', (err) => logger.warn({ component: 'redis', err: err.message }, 'redis error'));
  const mongo = await Mongo.connect(config.mongo);
  const store = await createObjectStore(config.storage);
  return {
    config,
    logger,
    metrics,
    mongo,
    redis,
    keys: redisKeys(config.redis.prefix, { cluster: config.redis.cluster }),
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
