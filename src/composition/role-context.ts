import type { Server as HttpServer } from 'node:http';
import type { Express, Router } from 'express';
import type { Role } from '../config/config.js';
import type { Infra } from './infra.js';
import type { Services } from './services.js';

/** What a running role exposes to the node: how to stop it, and what it mounts on HTTP. */
export interface RoleHandle {
  /** Called in reverse start order on shutdown; must drain (handoff, finish jobs) before resolving. */
  stop(): Promise<void>;
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
}

export type RoleStarter = (ctx: RoleContext) => Promise<RoleHandle>;
