import { z } from 'zod';
import { AppError } from '../../kernel/errors.js';
import type { Mongo, TenantDb } from '../../data/mongo.js';
import type { TenantRepository, TenantRecord } from '../../data/repositories/tenant.repository.js';
import { migrateTenant, type MigrationResult } from '../../data/migrations/migrator.js';
import type { AuditRecorder } from '../audit/audit-by.js';

/** Tenant names are DNS labels: they are the subdomain, the realm and the database suffix. */
export const TenantName = z
  .string()
  .min(2)
  .max(40)
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and inner hyphens only');

export interface ResolvedTenant {
  name: string;
  displayName: string;
  status: 'active' | 'suspended';
}

interface Deps {
  mongo: Mongo;
  tenants: TenantRepository;
  /** How long a resolved tenant is trusted from the in-process cache. */
  cacheMs?: number;
  /**
   * The tenants' audit trails: a tenant created, and each migration that changed its configuration,
   * collections or security rules, is recorded in the tenant's own trail (docs/audit.md).
   */
  audit?: AuditRecorder;
}

/** Who asked for a tenant change: the provisioning endpoint, the operator's CLI, or the node itself (demo seed). */
export type TenantChangeVia = 'provisioning' | 'cli' | 'node';

/** Creates, migrates and resolves tenants. Resolution is cached briefly; the catalog is the truth. */
export class TenantService {
  private readonly cache = new Map<string, { at: number; tenant: ResolvedTenant | null }>();
  private readonly cacheMs: number;

  constructor(private readonly deps: Deps) {
    this.cacheMs = deps.cacheMs ?? 5000;
  }

  async resolve(name: string): Promise<ResolvedTenant | null> {
    const hit = this.cache.get(name);
    if (hit && Date.now() - hit.at < this.cacheMs) return hit.tenant;
    if (!TenantName.safeParse(name).success) return null;
    const rec = await this.deps.tenants.findByName(name);
    const tenant = rec && rec.status === 'active' ? toResolved(rec) : null;
    this.cache.set(name, { at: Date.now(), tenant });
    return tenant;
  }

  /** Resolves or throws tenant_not_found: the only way code outside the catalog reaches a tenant's database. */
  async require(name: string): Promise<{ tenant: ResolvedTenant; db: TenantDb }> {
    const tenant = await this.resolve(name);
    if (!tenant) throw new AppError('tenant_not_found', `No tenant named '${name}'`);
    return { tenant, db: this.deps.mongo.tenantDb(tenant.name) };
  }

  async create(
    input: { name: string; displayName?: string },
    via: TenantChangeVia = 'cli',
  ): Promise<{ tenant: ResolvedTenant; migration: MigrationResult }> {
    const name = parseName(input.name);
    if (await this.deps.tenants.findByName(name))
      throw new AppError('tenant_exists', `Tenant '${name}' already exists`);
    const rec = await this.deps.tenants.create({ name, displayName: input.displayName ?? name });
    this.cache.delete(name);
    const migration = await this.migrate(name, via, true);
    return { tenant: toResolved(rec), migration };
  }

  /** Creates the tenant if missing, then migrates it; what provisioning and `npm start` call. */
  async ensure(input: { name: string; displayName?: string }, via: TenantChangeVia = 'node'): Promise<MigrationResult> {
    const name = parseName(input.name);
    let created = false;
    if (!(await this.deps.tenants.findByName(name))) {
      try {
        await this.deps.tenants.create({ name, displayName: input.displayName ?? name });
        created = true;
      } catch (e) {
        if ((e as { code?: number }).code !== 11000) throw e;
      }
      this.cache.delete(name);
    }
    return this.migrate(name, via, created);
  }

  /**
   * Runs the tenant's pending migrations. A migration that applied something changed the tenant's
   * configuration (settings, security rules, roles, indexes) and is recorded, after the creation when
   * this call created the tenant; a tenant already up to date records nothing.
   */
  async migrate(nameInput: string, via: TenantChangeVia = 'cli', created = false): Promise<MigrationResult> {
    const name = parseName(nameInput);
    const rec = await this.deps.tenants.findByName(name);
    if (!rec) throw new AppError('tenant_not_found', `No tenant named '${name}'`);
    const result = await migrateTenant(this.deps.mongo.tenantDb(name), { displayName: rec.displayName });
    await this.deps.tenants.setSchemaVersion(name, result.to);
    const audit = this.deps.audit;
    if (created) await audit?.record(name, { action: 'tenant.create', outcome: 'success', details: { via } });
    if (result.applied.length)
      await audit?.record(name, {
        action: 'tenant.migrate',
        outcome: 'success',
        details: { via, from: result.from, to: result.to, applied: result.applied },
      });
    return result;
  }

  list(): Promise<TenantRecord[]> {
    return this.deps.tenants.list();
  }
}

function parseName(name: string): string {
  const r = TenantName.safeParse(name);
  if (!r.success)
    throw new AppError('validation_failed', `tenantName: ${r.error.issues[0]?.message}`, {
      errors: [{ field: 'tenantName', message: r.error.issues[0]?.message ?? 'invalid' }],
    });
  return r.data;
}

function toResolved(r: TenantRecord): ResolvedTenant {
  return { name: r.name, displayName: r.displayName, status: r.status as ResolvedTenant['status'] };
}
