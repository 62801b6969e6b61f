import type { Config } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Mongo } from '../data/mongo.js';
import type { RedisClient, RedisConnectionOptions } from '../data/redis.js';
import type { RedisKeys } from '../data/redis-keys.js';
import type { ObjectStore } from '../storage/index.js';
import type { JobQueues } from '../data/job-queues.js';
import type { QrRenderer } from '../qr/qr-renderer.js';

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
