// What an actor system is built from (RedisActorSystem's constructor) and the defaults it applies.
import type { RedisClient } from '../../data/redis.js';
import type { Logger } from '../../observability/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { PushPublisher } from '../../realtime/push-delivery.js';
import type { ActorBehavior } from './types.js';
import type { LinkSettings } from './node-link.js';

export interface ActorSystemDeps {
  nodeId: string;
  /** Command connection (shared with the node); the system duplicates it for its blocking inbox reads. */
  redis: RedisClient;
  /** Base of the runtime's keys: `infra.keys.actors`. */
  keyPrefix: string;
  /**
   * `retiredRetentionMs`: how long a retired snapshot is kept (default 10 minutes). `connectionPollMs`:
   * how often a hosting node looks for crashed members' connections in Redis (default 250; 0: never,
   * a crashed node's shards then wait for its lease to expire). Decision 1116.
   */
  config: {
    shards: number;
    leaseMs: number;
    idleMs: number;
    retiredRetentionMs?: number;
    connectionPollMs?: number;
    /** A turn longer than this is logged (default SLOW_TURN_MS). */
    slowTurnMs?: number;
    /** Allowance for clocks apart on another node's deadline (default DEFAULT_DEADLINE_SKEW_MS). */
    deadlineSkewMs?: number;
    /**
     * Direct links to the other nodes (decision 1186): where this node listens once it hosts actors
     * (default DEFAULT_LINK: loopback, any free port); false: every ask between nodes by the Redis lists.
     */
    link?: LinkSettings | false;
  };
  logger: Logger;
  metrics: Metrics;
  /**
   * Where turns push, fixed at construction: a node gives its publisher (the hub's once the hub role runs,
   * else the Redis push relay; src/composition/role-links.ts). Default: the Redis push channel.
   */
  publisher?: PushPublisher;
  /** Channel of the default Redis publisher (`infra.keys.hubPush`; defaults to `<keyPrefix>hub-push`). */
  hubPushChannel?: string;
  behaviors?: ActorBehavior<any, any, any>[];
  /** Default total budget of an ask, retries included (default max(10 s, 4 x lease)). */
  askTimeoutMs?: number;
  /** How long replies are remembered for de-duplication (default 2 minutes, at least 6 asks' budget). */
  dedupeTtlMs?: number;
}

/** Where a node's direct link listens unless configured: peers on the same host reach it (decision 1186). */
export const DEFAULT_LINK: LinkSettings = { host: '127.0.0.1', port: 0 };

/** A turn that held its mailbox this long is logged unless configured (ACTOR_SLOW_TURN_MS). */
export const DEFAULT_SLOW_TURN_MS = 1_000;

/**
 * Added to a deadline another node set by its clock: a node whose clock runs up to this much ahead of
 * the asker's still runs an ask its asker waits for (ACTOR_DEADLINE_SKEW_MS, decision 1140).
 */
export const DEFAULT_DEADLINE_SKEW_MS = 1_000;

/** How long a retired snapshot is kept unless configured (ACTOR_RETIRED_RETENTION_SECONDS). */
export const DEFAULT_RETIRED_RETENTION_MS = 600_000;

/** How often a hosting node polls Redis for crashed members' connections unless configured (decision 1116). */
export const DEFAULT_CONNECTION_POLL_MS = 250;
