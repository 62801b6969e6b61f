import { recordBy, type AuditRecorder } from '../audit/audit-by.js';
import type { Principal } from '../../kernel/principal.js';
import type { UserRecord, UserRepository } from '../../data/repositories/user.repository.js';
import type { TenantConfigRepository } from '../../data/repositories/tenant-config.repository.js';
import type { ResolvedTenant } from './tenant.service.js';
import { AppError } from '../../kernel/errors.js';
import { oid } from '../../kernel/object-id.js';
import { defaultSettings } from '../../data/tenant-defaults.js';
import { TtlCache } from '../../kernel/ttl-cache.js';
import type { QrRenderer } from '../../qr/qr-renderer.js';

export interface Connectivity {
  user: UserRecord;
  online: boolean;
  /** Sockets open across hub nodes. */
  connections: number;
  lastSeenAt: Date | null;
}

export interface AdminDeps {
  users: (tenant: string) => Pick<UserRepository, 'findById' | 'findByUsername'>;
  settings: (tenant: string) => TenantConfigRepository;
  connections: (tenant: string, userId: string) => Promise<number>;
  /** Public base URL of the deployment, the base domain tenants are subdomains of, and the OIDC issuer template. */
  site: { publicUrl: string; baseDomain: string; issuerTemplate: string; clientId: string };
  /** Renders QR codes off the main thread (./qr-renderer.ts). */
  qr: Pick<QrRenderer, 'render'>;
  /** The tenant's audit trail: every helper look-up of another user's presence is recorded (docs/audit.md). */
  audit?: AuditRecorder;
}

/** Which admin helper looked a user up (recorded with the read). */
export type PresenceHelper = 'lastSeen' | 'isOnline' | 'user';

export type TenantConfig = ReturnType<typeof defaultSettings> & { tenant: string };

/**
 * Admin helpers (connectivity look-ups) and tenant administration read models (TenantConfig, basic
 * info, private-server onboarding configuration). Path tenants must be the caller's own tenant:
 * another tenant's users are answered user_not_found, never looked up.
 */
export class AdminService {
  /** Allowed origins per tenant: a settings change applies within 10 s. */
  private readonly origins = new TtlCache<string, readonly string[]>({ ttlMs: 10_000, maxEntries: 10_000 });
  private readonly scopes = new TtlCache<string, 'careTeam' | 'tenant'>({ ttlMs: 10_000, maxEntries: 10_000 });
  /** Rendered QR codes by the configuration text they carry (a tenant's changes only when its config does). */
  private readonly qrCodes = new TtlCache<string, Promise<string>>({ ttlMs: 60 * 60_000, maxEntries: 500 });

  constructor(private readonly deps: AdminDeps) {}

  async byContact(p: Principal, contactId: string): Promise<Connectivity> {
    const user = await this.deps.users(p.tenant).findById(oid(contactId, 'contact_not_found'));
    if (!user) throw new AppError('contact_not_found', `No contact ${contactId}`);
    return this.connectivity(p, user, 'lastSeen');
  }

  async byUsername(p: Principal, tenant: string, username: string, helper: PresenceHelper): Promise<Connectivity> {
    if (tenant.toLowerCase() !== p.tenant) throw new AppError('user_not_found', `No user '${username}'`);
    const user = await this.deps.users(p.tenant).findByUsername(username);
    if (!user) throw new AppError('user_not_found', `No user '${username}'`);
    return this.connectivity(p, user, helper);
  }

  private async connectivity(p: Principal, user: UserRecord, helper: PresenceHelper): Promise<Connectivity> {
    const tenant = p.tenant;
    if (String(user._id) !== p.userId)
      await recordBy(this.deps.audit, p, 'presence.read', { subjectId: String(user._id), details: { helper } });
    const connections = await this.deps.connections(tenant, String(user._id));
    return { user, online: connections > 0, connections, lastSeenAt: user.lastSeenAt ?? null };
  }

  /** TenantConfig: the stored settings over the defaults (a setting added later still has a value). */
  async tenantConfig(tenant: ResolvedTenant): Promise<TenantConfig> {
    const s = await this.deps.settings(tenant.name).settings();
    const d = defaultSettings(tenant.displayName);
    return {
      ...d,
      tenant: tenant.name,
      displayName: s?.displayName ?? d.displayName,
      locale: s?.locale ?? d.locale,
      timezone: s?.timezone ?? d.timezone,
      uploads: { ...d.uploads, ...(s?.uploads ?? {}) } as TenantConfig['uploads'],
      security: { ...d.security, ...(s?.security ?? {}) } as TenantConfig['security'],
      features: { ...d.features, ...(s?.features ?? {}) },
      meetings: {
        ...d.meetings,
        ...Object.fromEntries(Object.entries(s?.meetings ?? {}).filter(([, v]) => v !== undefined && v !== null)),
      },
      cors: { allowedOrigins: s?.cors?.allowedOrigins ?? d.cors.allowedOrigins },
      webApp: {
        signInRedirectUri: s?.webApp?.signInRedirectUri ?? null,
        loginApproveUrl: s?.webApp?.loginApproveUrl ?? null,
      },
      directory: {
        patientScope:
          (s?.directory?.patientScope as TenantConfig['directory']['patientScope'] | undefined) ??
          d.directory.patientScope,
      },
    };
  }

  /** Drops this node's cached origins and patient scope of `tenant` (other nodes follow within 10 s). */
  forget(tenant: string): void {
    this.origins.delete(tenant);
    this.scopes.delete(tenant);
  }

  /** TenantConfig `directory.patientScope`, cached briefly: read by every directory request of a patient. */
  patientScope(tenant: string): Promise<TenantConfig['directory']['patientScope']> {
    return this.scopes.getOrLoad(
      tenant,
      async () =>
        ((await this.deps.settings(tenant).settings())?.directory?.patientScope as 'careTeam' | 'tenant' | undefined) ??
        'careTeam',
    );
  }

  /** The tenant's allowed browser origins (TenantConfig `cors`), cached briefly: read on every cross-origin request. */
  allowedOrigins(tenant: string): Promise<readonly string[]> {
    return this.origins.getOrLoad(
      tenant,
      async () => (await this.deps.settings(tenant).settings())?.cors?.allowedOrigins ?? [],
    );
  }

  /** TenantConfig `meetings` over the defaults: ring and heartbeat timings, the waiting room policy. */
  async meetingSettings(tenant: string): Promise<TenantConfig['meetings']> {
    const s = await this.deps.settings(tenant).settings();
    const stored = Object.fromEntries(
      Object.entries(s?.meetings ?? {}).filter(([, v]) => v !== undefined && v !== null),
    );
    return { ...defaultSettings(tenant).meetings, ...stored };
  }

  async features(tenant: string): Promise<TenantConfig['features']> {
    const s = await this.deps.settings(tenant).settings();
    return { ...defaultSettings(tenant).features, ...(s?.features ?? {}) };
  }

  basicTenantInfo(tenant: ResolvedTenant): { name: string; displayName: string; baseUrl: string; realm: string } {
    return {
      name: tenant.name,
      displayName: tenant.displayName,
      baseUrl: this.tenantUrl(tenant.name),
      realm: tenant.name,
    };
  }

  /** What a standalone app scans to point itself at this tenant (docs/decisions/206-private-server-config.md). */
  privateServerConfig(tenant: ResolvedTenant) {
    const baseUrl = this.tenantUrl(tenant.name);
    return {
      version: 1,
      tenant: tenant.name,
      displayName: tenant.displayName,
      baseUrl,
      graphqlUrl: `${baseUrl}/graphql`,
      hubUrl: `${baseUrl}/hubs/mobile`,
      oidc: {
        issuer: this.deps.site.issuerTemplate.replace('{tenant}', tenant.name),
        clientId: this.deps.site.clientId,
      },
    };
  }

  async privateServerConfigQrCode(
    tenant: ResolvedTenant,
  ): Promise<{ config: ReturnType<AdminService['privateServerConfig']>; dataUrl: string }> {
    const config = this.privateServerConfig(tenant);
    const text = JSON.stringify(config);
    // The same configuration always renders the same PNG: rendered once on the QR worker, then served.
    let rendering = this.qrCodes.get(text);
    if (!rendering) {
      // The promise is kept, so aliases of the field in one request share one render.
      rendering = this.deps.qr.render(text, { errorCorrectionLevel: 'M', margin: 2, width: 320 });
      this.qrCodes.set(text, rendering);
      rendering.catch(() => this.qrCodes.delete(text));
    }
    const dataUrl = await rendering;
    return { config, dataUrl };
  }

  /** `{scheme}://{tenant}.{baseDomain}[:port]`, from the deployment's public URL. */
  tenantUrl(tenant: string): string {
    const u = new URL(this.deps.site.publicUrl);
    return `${u.protocol}//${tenant}.${this.deps.site.baseDomain}${u.port ? `:${u.port}` : ''}`;
  }
}
