import type { HubPublisher } from '../actors/runtime/types.js';
import type { Logger } from '../observability/logger.js';
import { SERVER_EVENTS, type ServerEventName, type ServerToClientEvents } from './hub.events.js';
import type { HubServer } from './hub.types.js';

function isServerEvent(name: string): name is ServerEventName {
  return (SERVER_EVENTS as readonly string[]).includes(name);
}

type Emitter = ReturnType<HubServer['to']>;

function send(target: Emitter, event: ServerEventName, payload: unknown): void {
  (target.emit as (ev: ServerEventName, p: Parameters<ServerToClientEvents[ServerEventName]>[0]) => boolean)(event, payload as never);
}

/**
 * The hub's HubPublisher: actor pushes go to Socket.IO rooms through the Redis adapter, so every hub
 * node delivers them to its own sockets. Only the pushed-message names of the typed map pass.
 */
export class SocketIoHubPublisher implements HubPublisher {
  constructor(private readonly io: HubServer, private readonly logger: Logger) {}

  emit(rooms: string | string[], event: string, payload: unknown): void {
    if (!isServerEvent(event)) {
      this.logger.warn({ component: 'hub', event }, 'push with an unknown event name dropped');
      return;
    }
    const list = Array.isArray(rooms) ? rooms : [rooms];
    if (list.length) send(this.io.to(list), event, payload);
  }

  /** Delivers a push relayed from the Redis push channel to this node's sockets only (every hub node relays it). */
  emitLocal(rooms: string[], event: string, payload: unknown): void {
    if (!isServerEvent(event) || !rooms.length) return;
    send(this.io.local.to(rooms), event, payload);
  }
}
