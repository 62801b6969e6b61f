import { AppError } from '../../kernel/errors.js';
import type { Role } from '../../config/env-schema.js';
import type { Config } from '../../config/config.js';
import type { RedisClient } from '../../data/redis.js';
import type { RedisKeys } from '../../data/redis-keys.js';
import type { Logger } from '../../observability/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { PushPublisher } from '../../realtime/push-delivery.js';
import { RedisActorSystem } from './actor-system.js';
import type { ActorBehavior, ActorSystem } from './types.js';

/** The `actors` role's handle: the node's actor system, found by later roles in ctx.started. */
export interface ActorsRoleHandle {
  system: RedisActorSystem;
  actorClient: Pick<ActorSystem, 'ask'>;
  stop(): Promise<void>;
}

/**
 * What starting a node's actor system takes of a role's context (the RoleContext of src/app, which every
 * role receives, has it): the connections, the node's push publisher and the actor client of a role
 * started earlier.
 */
export interface ActorSystemContext {
  infra: { config: Config; redis: RedisClient; keys: RedisKeys; logger: Logger; metrics: Metrics };
  pushes: PushPublisher;
  actorClient(): Pick<ActorSystem, 'ask'> | undefined;
}

/**
 * Starts the node's actor system with `behaviors` registered: it hosts actors of those kinds (joins
 * placement) at once. Without behaviours it only routes asks to hosting nodes, as a client. Its pushes
 * go to the node's publisher (ctx.pushes), fixed at construction.
 */
export async function startActorSystem(
  ctx: ActorSystemContext,
  behaviors: ActorBehavior<any, any, any>[],
): Promise<ActorsRoleHandle> {
  const { infra } = ctx;
  const system = new RedisActorSystem({
    behaviors,
    nodeId: infra.config.nodeId,
    redis: infra.redis,
    keyPrefix: infra.keys.actors,
    config: infra.config.actors,
    logger: infra.logger,
    metrics: infra.metrics,
    hubPushChannel: infra.keys.hubPush,
    publisher: ctx.pushes,
  });
  await system.start();
  return { system, actorClient: system, stop: () => system.stop() };
}

/**
 * The actor system a role asks on this node: the one of a role started earlier (ctx.actorClient: the
 * `actors` role's, else a client-only one of another role), else a client-only system started here
 * (returned with its stop).
 */
export async function actorClientFor(
  ctx: ActorSystemContext,
): Promise<{ system: Pick<RedisActorSystem, 'ask'>; stop?: () => Promise<void> }> {
  const existing = ctx.actorClient();
  if (existing) return { system: existing };
  const client = await startActorSystem(ctx, []);
  return { system: client.system, stop: client.stop };
}

/** The actor system started by this node's `actors` role (for the hub and other roles, and tests). */
export function actorSystemOf(started: ReadonlyMap<Role, object>): RedisActorSystem {
  const handle = started.get('actors') as ActorsRoleHandle | undefined;
  if (!handle?.system) throw new AppError('service_unavailable', "the 'actors' role is not running on this node");
  return handle.system;
}
