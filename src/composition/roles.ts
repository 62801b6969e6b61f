import type { Role } from '../config/env-schema.js';
import type { RoleStarter } from '../app/index.js';

/**
 * Roles in start order. Each is imported lazily so a worker-only node never loads Socket.IO and an
 * HTTP-only node never loads sharp. `http` is built by the node itself.
 */
export const ROLE_STARTERS: Partial<Record<Role, () => Promise<RoleStarter>>> = {
  idp: async () => (await import('../idp/idp.role.js')).startIdp,
  actors: async () => (await import('./actors.role.js')).startActorsRole,
  workers: async () => (await import('../workers/workers.role.js')).startWorkersRole,
  telemetry: async () => (await import('../telemetry/telemetry.role.js')).startTelemetryRole,
  hub: async () => (await import('../hub/hub.role.js')).startHubRole,
};
export const ROLE_ORDER: readonly Role[] = ['idp', 'actors', 'workers', 'telemetry', 'hub', 'http'];
