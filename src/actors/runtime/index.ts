import { RedisActorSystem } from './actor-system.js';
import type { ActorSystemDeps } from './system-settings.js';

export { RedisActorSystem } from './actor-system.js';
export type { ActorSystemDeps } from './system-settings.js';
export type { ActorEventMap, ActorSystemEvents } from './actor-events.js';
export { fencedWrite, epochFilter, epochStamp, type Fence } from './fenced-write.js';
export { addressKey, shardOf, rendezvousOwner, ActorAddressSchema } from './placement.js';
export { actorSystemOf, type ActorsRoleHandle } from './node-system.js';
export type * from './types.js';

/**
 * Creates and starts a node's actor system (used by the `actors` role, tests and child-process
 * fixtures). Behaviours passed here are registered before the node joins placement.
 */
export async function createActorSystem(deps: ActorSystemDeps): Promise<RedisActorSystem> {
  const system = new RedisActorSystem(deps);
  await system.start();
  return system;
}
