import { AppError } from '../../kernel/errors.js';
import type { Role } from '../../config/config.js';
import type { RoleContext, RoleHandle } from '../../composition/role-context.js';
import { RedisActorSystem } from './actor-system.js';
import type { ActorBehavior } from './types.js';

/** The `actors` role's handle: the node's actor system, found by later roles in ctx.started. */
export interface ActorsRoleHandle extends RoleHandle {
  system: RedisActorSystem;
}

/**
 * Starts the node's actor system with `behaviors` registered: it hosts actors of those kinds (joins
 * placement) at once. Without behaviours it only routes asks to hosting nodes, as a client. Its pushes
 * go to the node's publisher (ctx.pushes), fixed at construction.
 */
export async function startActorSystem(
  ctx: RoleContext,
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
  ctx: RoleContext,
): Promise<{ system: Pick<RedisActorSystem, 'ask'>; stop?: () => Promise<void> }> {
  const existing = ctx.actorClient();
  if (existing) return { system: existing };
  const client = await startActorSystem(ctx, []);
  return { system: client.system, stop: client.stop };
}

/** The actor system started by this node's `actors` role (for the hub and other roles, and tests). */
export function actorSystemOf(started: ReadonlyMap<Role, RoleHandle>): RedisActorSystem {
  const handle = started.get('actors') as ActorsRoleHandle | undefined;
  if (!handle?.system) throw new AppError('service_unavailable', "the 'actors' role is not running on this node");
  return handle.system;
}
