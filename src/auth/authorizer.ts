import { type RoleRepository } from '../data/repositories/role.repository.js';
import { BUILTIN_ROLES, isPermission, type Permission } from '../kernel/permissions.js';

export interface AuthorizerDeps {
  /** The tenant's role repository (a factory of the composition root). */
  roles(tenant: string): RoleRepository;
  /** How long a role's permissions are trusted from memory; role edits take effect within this. */
  cacheMs?: number;
}

/**
 * Roles -> permissions. A tenant's Role documents are the truth (admins edit them); the built-in
 * definitions answer for a role that a tenant has not stored. Unknown permission names are dropped.
 */
export class Authorizer {
  private readonly cache = new Map<string, { at: number; perms: ReadonlySet<Permission> }>();
  private readonly cacheMs: number;

  constructor(private readonly deps: AuthorizerDeps) {
    this.cacheMs = deps.cacheMs ?? 5000;
  }

  async permissionsOf(tenant: string, role: string): Promise<ReadonlySet<Permission>> {
    const key = `${tenant}\u0000${role}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < this.cacheMs) return hit.perms;
    const stored = await this.deps.roles(tenant).findByName(role);
    const names = stored?.permissions ?? BUILTIN_ROLES[role]?.permissions ?? [];
    const perms: ReadonlySet<Permission> = new Set(names.filter(isPermission));
    this.cache.set(key, { at: Date.now(), perms });
    return perms;
  }

  /** Whether a role name exists for the tenant (stored or built in). */
  async roleExists(tenant: string, role: string): Promise<boolean> {
    return Boolean(BUILTIN_ROLES[role]) || Boolean(await this.deps.roles(tenant).findByName(role));
  }

  forget(tenant: string, role: string): void {
    this.cache.delete(`${tenant}\u0000${role}`);
  }
}

/** Permissions an offline-token session may carry at most, whatever the role grants. */
export const OFFLINE_PERMISSIONS: readonly Permission[] = [
  'profile:read',
  'tenant:read',
  'contacts:read',
  'notices:read',
  'events:read',
  'media:read',
  'peripherals:read',
];

export function intersect(a: Iterable<Permission>, b: ReadonlySet<Permission> | readonly Permission[]): Permission[] {
  const set = b instanceof Set ? b : new Set(b as readonly Permission[]);
  return [...a].filter((p) => set.has(p));
}
