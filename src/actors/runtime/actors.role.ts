import { AppError } from '../../core/errors.js';
import type { Role } from '../../config/config.js';
import type { RoleContext, RoleHandle } from '../../roles.js';
import { RedisActorSystem } from './actor-system.js';

/** The `actors` role's handle: the node's actor system, found by later roles in ctx.started. */
export interface ActorsRoleHandle extends RoleHandle {
  system: RedisActorSystem;
}

/**
 * Starts the node's actor system. It hosts actors (joins placement) once behaviours are registered
 * on it, e.g. by the hub role; until then it routes asks to hosting nodes as a client.
 */
export async function startActorsRole(ctx: RoleContext): Promise<ActorsRoleHandle> {
  const { infra } = ctx;
  const system = new RedisActorSystem({
    nodeId: infra.config.nodeId,
    redis: infra.redis,
    keyPrefix: infra.keys.actors,
    config: infra.config.actors,
    logger: infra.logger,
    metrics: infra.metrics,
    hubPushChannel: infra.keys.hubPush,
  });
  await system.start();
  return { system, stop: () => system.stop() };
}

/** The actor system started by this node's `actors` role (for the hub and other roles, and tests). */
export function actorSystemOf(started: ReadonlyMap<Role, RoleHandle>): RedisActorSystem {
  const handle = started.get('actors') as ActorsRoleHandle | undefined;
  if (!handle?.system) throw new AppError('service_unavailable', "the 'actors' role is not running on this node");
  return handle.system;
}
