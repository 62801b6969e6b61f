import { AppError } from '../../kernel/errors.js';
import type { Role } from '../../config/config.js';
import type { RoleContext, RoleHandle } from '../../composition/role-context.js';
import { historyPublisher } from '../../realtime/redis-publisher.js';
import { RedisActorSystem } from './actor-system.js';
import type { ActorBehavior } from './types.js';

/** The `actors` role's handle: the node's actor system, found by later roles in ctx.started. */
export interface ActorsRoleHandle extends RoleHandle {
  system: RedisActorSystem;
}

/**
 * Starts the node's actor system with `behaviors` registered: it hosts actors of those kinds (joins
 * placement) at once. Without behaviours it only routes asks to hosting nodes, as a client.
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
    publisher: historyPublisher(infra.redis, infra.keys, infra.config.hub.history, infra.logger),
  });
  await system.start();
  return { system, stop: () => system.stop() };
}

/**
 * The actor system REST and GraphQL ask on this node: the `actors` role's, else the hub's client, else
 * a client-only system started for an HTTP-only node (returned with its stop).
 */
export async function actorClientFor(
  ctx: RoleContext,
): Promise<{ system: Pick<RedisActorSystem, 'ask'>; stop?: () => Promise<void> }> {
  const own = ctx.started.get('actors') as ActorsRoleHandle | undefined;
  if (own?.system) return { system: own.system };
  const hub = ctx.started.get('hub') as (RoleHandle & { actors?: RedisActorSystem }) | undefined;
  if (hub?.actors) return { system: hub.actors };
  const client = await startActorSystem(ctx, []);
  return { system: client.system, stop: client.stop };
}

/**
 * Gives services.meetingRooms (REST, GraphQL, the telemetry completion job) an actor system unless a role
 * started earlier gave it one: see actorClientFor. Returns the stop of a client-only system started here.
 */
export async function attachMeetingRooms(ctx: RoleContext): Promise<(() => Promise<void>) | undefined> {
  if (ctx.services.meetingRooms.attached) return undefined;
  const client = await actorClientFor(ctx);
  ctx.services.meetingRooms.use(client.system);
  return client.stop;
}

/** The actor system started by this node's `actors` role (for the hub and other roles, and tests). */
export function actorSystemOf(started: ReadonlyMap<Role, RoleHandle>): RedisActorSystem {
  const handle = started.get('actors') as ActorsRoleHandle | undefined;
  if (!handle?.system) throw new AppError('service_unavailable', "the 'actors' role is not running on this node");
  return handle.system;
}
