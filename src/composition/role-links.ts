import type { Role } from '../config/env-schema.js';
import type { PushName, PushPayload } from '../contracts/pushes.js';
import type { PushOrigin, PushPublisher, RoomMove } from '../realtime/push-delivery.js';
import type { ActorClient, RoleHandle } from '../app/index.js';

/**
 * What the roles provide to what the composition builds before they start (decision 1125), created up
 * front and resolved on use from the node's started roles: nothing is set on a service or an actor system
 * after start.
 * - `actorClient()`: the actor system of the first started role that has one (start order: the `actors`
 *   role's own, else the client-only one of `workers`, of `hub`, or the one the node starts for `http`);
 *   undefined until one started.
 * - `pushes`: where the node's actors push: the hub role's publisher once the hub runs, else `relay` (the
 *   Redis push channel, which every hub node delivers from).
 */
export interface RoleLinks {
  actorClient(): ActorClient | undefined;
  pushes: PushPublisher;
}

export function roleLinks(started: ReadonlyMap<Role, RoleHandle>, relay: PushPublisher): RoleLinks {
  let client: ActorClient | undefined;
  let hub: PushPublisher | undefined;
  return {
    // Roles only start, in order, until the node stops: the first found stays the answer.
    actorClient: () => (client ??= first(started, (h) => h.actorClient)),
    pushes: new RolePushes(relay, () => (hub ??= first(started, (h) => h.pushPublisher))),
  };
}

function first<T>(started: ReadonlyMap<Role, RoleHandle>, pick: (h: RoleHandle) => T | undefined): T | undefined {
  for (const handle of started.values()) {
    const found = pick(handle);
    if (found) return found;
  }
  return undefined;
}

/** The node's push publisher: the hub's once it runs, the relay before and on nodes without a hub. */
class RolePushes implements PushPublisher {
  /** The relay took pushes that idle() has not awaited since the hub's publisher took over. */
  private relayPending = false;

  constructor(
    private readonly relay: PushPublisher,
    private readonly hub: () => PushPublisher | undefined,
  ) {}

  private target(): PushPublisher {
    const hub = this.hub();
    if (hub) return hub;
    this.relayPending = true;
    return this.relay;
  }

  emit<E extends PushName>(rooms: string | string[], event: E, payload: PushPayload<E>, origin?: PushOrigin): void {
    this.target().emit(rooms, event, payload, origin);
  }

  move(rooms: string | string[], change: RoomMove): void {
    this.target().move?.(rooms, change);
  }

  async idle(): Promise<void> {
    const target = this.target();
    if (target === this.relay || !this.relayPending) return target.idle?.();
    // The hub took over while the relay still held pushes: both are awaited, once.
    this.relayPending = false;
    await Promise.all([this.relay.idle?.(), target.idle?.()]);
  }
}
