import { recordBy, type AuditRecorder } from '../audit/audit-by.js';
import type { Principal } from '../../kernel/principal.js';
import type { TenantConfigRepository, TenantSettingsRecord } from '../../data/repositories/tenant-config.repository.js';
import type { SecurityRules } from '../../data/repositories/credential.repository.js';
import { defaultSettings } from '../../data/tenant-defaults.js';
import type { AdminService, TenantConfig } from './admin.service.js';
import type { SecurityRulesService } from '../identity/security-rules.service.js';
import type { ResolvedTenant } from './tenant.service.js';
import type { SecurityRulesPatch, TenantConfigPatch } from './tenant-settings.schema.js';
import { AppError } from '../../kernel/errors.js';

export interface TenantSettingsDeps {
  settings: (tenant: string) => Pick<TenantConfigRepository, 'settings' | 'setPaths'>;
  admin: Pick<AdminService, 'tenantConfig'>;
  rules: Pick<SecurityRulesService, 'get'>;
  /** This node's caches of a tenant's settings, dropped after each change (AdminService, SecurityRulesService, WebAppUrls). */
  caches: { forget(tenant: string): void }[];
  audit?: AuditRecorder;
}

/** One changed path with the value in effect before (stored or default) and the new one. */
export interface SettingChange {
  path: string;
  old: unknown;
  new: unknown;
}

/**
 * Tenant administrators change their tenant's configuration and security rules (decision 950): only the
 * given paths are written, each change is audited with old -> new values, and this node's caches of the
 * tenant are dropped at once (allowed origins, patient scope, features, meeting settings and web app
 * pages: other nodes within 10 s; security rules: within 5 s; upload limits and the recording consent
 * policy are read uncached).
 */
export class TenantSettingsService {
  constructor(private readonly deps: TenantSettingsDeps) {}

  async configure(p: Principal, tenant: ResolvedTenant, patch: TenantConfigPatch): Promise<TenantConfig> {
    await this.apply(p, tenant.name, leaves(patch), 'tenant.configure');
    return this.deps.admin.tenantConfig(tenant);
  }

  /**
   * The rules that span fields (PIN min <= max, lockout <= its cap, access <= refresh lifetime) are
   * checked against the document read, and the write applies only if it is still that document
   * (compare-and-set on its revision), else it reads and checks again: two admins changing the two ends of
   * a bound at once cannot store a pair that breaks it.
   */
  async changeSecurityRules(p: Principal, tenant: string, patch: SecurityRulesPatch): Promise<SecurityRules> {
    const set = leaves(patch, 'security');
    for (let attempt = 0; ; attempt++) {
      const stored = await this.deps.settings(tenant).settings();
      checkBounds(set, effective(stored, tenant));
      if (await this.apply(p, tenant, set, 'security.rules.change', stored?.rev ?? null)) break;
      if (attempt === 4)
        throw new AppError('conflict', 'The security rules kept changing meanwhile; read them and try again');
    }
    return this.deps.rules.get(tenant);
  }

  /** Writes `set`; false when `ifRevision` is given and the document changed since that revision. */
  private async apply(
    p: Principal,
    tenant: string,
    set: Record<string, unknown>,
    action: string,
    ifRevision?: number | null,
  ): Promise<boolean> {
    if (!Object.keys(set).length) return true;
    const before = await this.deps.settings(tenant).setPaths(set, ifRevision);
    if (!before) {
      if (ifRevision !== undefined && (await this.deps.settings(tenant).settings())) return false;
      throw new AppError('tenant_not_found', `Tenant '${tenant}' has no configuration`);
    }
    for (const c of this.deps.caches) c.forget(tenant);
    const was = effective(before, tenant);
    const changes: SettingChange[] = Object.entries(set)
      .map(([path, value]) => ({ path, old: at(was, path) ?? null, new: value }))
      .filter((c) => JSON.stringify(c.old) !== JSON.stringify(c.new));
    if (changes.length)
      await recordBy(this.deps.audit, p, action, { details: { paths: changes.map((c) => c.path), changes } });
    return true;
  }
}

/** The security rules that span fields, checked on the values a change would leave in effect. */
function checkBounds(set: Record<string, unknown>, current: Record<string, unknown>): void {
  const next = (path: string) => (path in set ? set[path] : at(current, path)) as number;
  const errors: { field: string; message: string }[] = [];
  if (next('security.pin.minLength') > next('security.pin.maxLength'))
    errors.push({ field: 'pin.minLength', message: 'must not exceed pin.maxLength' });
  if (next('security.lockout.lockoutSeconds') > next('security.lockout.maxLockoutSeconds'))
    errors.push({ field: 'lockout.lockoutSeconds', message: 'must not exceed lockout.maxLockoutSeconds' });
  if (next('security.session.accessTokenTtlSeconds') > next('security.session.refreshTokenTtlSeconds'))
    errors.push({
      field: 'session.accessTokenTtlSeconds',
      message: 'must not exceed session.refreshTokenTtlSeconds',
    });
  if (errors.length) throw new AppError('validation_failed', `${errors[0]!.field}: ${errors[0]!.message}`, { errors });
}

/** The stored document over the defaults: what was in effect (a setting added later reads its default). */
function effective(stored: TenantSettingsRecord | null, tenant: string): Record<string, unknown> {
  const d = defaultSettings(tenant) as unknown as Record<string, unknown>;
  return merge(d, (stored ?? {}) as Record<string, unknown>);
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined || v === null) continue;
    const b = base[k];
    out[k] = isPlain(v) && isPlain(b) ? merge(b, v) : v;
  }
  return out;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** Dotted leaf paths of a patch (arrays and null are values), under `prefix`. */
function leaves(patch: object, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    const path = prefix ? `${prefix}.${k}` : k;
    if (isPlain(v)) Object.assign(out, leaves(v, path));
    else out[path] = v;
  }
  return out;
}

function at(o: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((x, k) => (isPlain(x) ? x[k] : undefined), o);
}
