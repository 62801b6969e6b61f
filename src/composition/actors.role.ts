import type { RoleContext } from '../app/index.js';
import { startActorSystem, type ActorsRoleHandle } from '../actors/runtime/node-system.js';
import { actorBehaviours } from '../actors/actor-deps.js';

/**
 * The `actors` role: the node's actor system, hosting the call, meeting and device actors. It needs no
 * hub: a node with only this role hosts actors, and their pushes reach sockets through the hub nodes
 * (the Redis push relay of src/realtime/).
 */
export function startActorsRole(ctx: RoleContext): Promise<ActorsRoleHandle> {
  const { services, infra } = ctx;
  const behaviours = actorBehaviours(
    {
      calls: services.calls,
      presence: services.presence,
      meetings: services.meetings,
      recording: services.recording,
      completion: services.completion,
      consent: services.recordingConsent,
      devices: services.peripherals,
      audit: services.auth.audit,
    },
    infra.config.hub,
  );
  return startActorSystem(ctx, behaviours);
}
