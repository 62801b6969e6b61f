import type { Server as HttpServer } from 'node:http';
import type { Express, Router } from 'express';
import type { Role } from '../config/env-schema.js';
import type { Infra } from './infra.js';
import type { Services } from './services.js';
import type { PushPublisher } from '../realtime/push-delivery.js';
import type { ActorSystem } from '../actors/runtime/types.js';

/** What REST, GraphQL and jobs ask the meeting actors through. */
export type ActorClient = Pick<ActorSystem, 'ask'>;

/** What a running role exposes to the node: how to stop it, and what it mounts on HTTP. */
export interface RoleHandle {
  /** Called in reverse start order on shutdown; must drain (handoff, finish jobs) before resolving. */
  stop(): Promise<void>;
  /** The actor system this role asks (its own, or a client-only one): REST, GraphQL and jobs use the first role's. */
  actorClient?: ActorClient;
  /** The hub role's push publisher: the node's actors push through it while the hub runs. */
  pushPublisher?: PushPublisher;
}

export interface RoleContext {
  infra: Infra;
  services: Services;
  /** The node's HTTP server (present when any of http, hub, idp runs). */
  server?: HttpServer;
  /** Mount routers on the Express app before it is sealed (only during start). */
  mount: { preTenant(path: string, router: Router | Express): void; route(path: string, router: Router): void };
  /** Handles of roles started earlier in this node (hub needs actors, for example). */
  started: Map<Role, RoleHandle>;
  /**
   * Where an actor system started by a role pushes, given at its construction: the hub's publisher once the
   * hub role runs, else the Redis push relay (src/composition/role-links.ts).
   */
  pushes: PushPublisher;
  /** The actor system of the first started role that has one (src/composition/role-links.ts). */
  actorClient(): ActorClient | undefined;
}

export type RoleStarter = (ctx: RoleContext) => Promise<RoleHandle>;
