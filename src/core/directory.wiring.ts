import type { Infra } from '../composition.js';
import { UserRepository } from '../data/repositories/user.repository.js';
import { PresenceService, type LastSeenStore } from './presence.service.js';

/**
 * Wires the directory, scheduling and tenant-administration services (presence, contacts, groups,
 * notices, events, meetings, peripherals, admin helpers) from infra. createServices spreads the result,
 * so each service is reached as `services.<name>`.
 */
export function createDirectoryServices(infra: Infra) {
  const users = (tenant: string) => new UserRepository(infra.mongo.tenantDb(tenant));
  const lastSeen: LastSeenStore = {
    touchLastSeen: (tenant, id, at) => users(tenant).touchLastSeen(id, at),
    lastSeenAt: async (tenant, id) => (await users(tenant).findById(id))?.lastSeenAt,
  };
  const presence = new PresenceService({ redis: infra.redis, keys: infra.keys, lastSeen, logger: infra.logger });
  return { presence };
}
