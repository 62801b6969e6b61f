import { recordBy, type AuditRecorder } from '../audit/audit-by.js';
import type { Principal } from '../../kernel/principal.js';
import type { UserRecord, UserRepository } from '../../data/repositories/user.repository.js';
import type { TenantConfigRepository, TenantSettingsRecord } from '../../data/repositories/tenant-config.repository.js';
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
  /**
   * Each tenant's stored settings as last read, for the reads on hot paths (allowed origins on every
   * cross-origin request, the patient scope on every directory request of a patient, meeting settings and
   * features on every join; decision 1135): one read per tenant per 10 s, and concurrent misses share it.
   * A change on this node applies at once (`forget`), on other nodes within 10 s.
   */
  private readonly stored = new TtlCache<string, Promise<TenantSettingsRecord | null>>({
    ttlMs: 10_000,
    maxEntries: 10_000,
  });
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

  /** Drops this node's cached settings of `tenant` (other nodes follow within 10 s). */
  forget(tenant: string): void {
    this.stored.delete(tenant);
  }

  /** The tenant's stored settings, cached briefly (see `stored`); `fresh` reads them now. */
  private settingsOf(tenant: string, fresh = false): Promise<TenantSettingsRecord | null> {
    if (fresh) return this.deps.settings(tenant).settings();
    let read = this.stored.get(tenant);
    if (!read) {
      read = this.deps.settings(tenant).settings();
      this.stored.set(tenant, read);
      // A failed read is not kept: the next caller reads again.
      read.catch(() => {
        if (this.stored.get(tenant) === read) this.stored.delete(tenant);
      });
    }
    return read;
  }

  /** TenantConfig `directory.patientScope`, cached briefly: read by every directory request of a patient. */
  async patientScope(tenant: string): Promise<TenantConfig['directory']['patientScope']> {
    const s = await this.settingsOf(tenant);
    return (s?.directory?.patientScope as 'careTeam' | 'tenant' | undefined) ?? 'careTeam';
  }

  /** The tenant's allowed browser origins (TenantConfig `cors`), cached briefly: read on every cross-origin request. */
  async allowedOrigins(tenant: string): Promise<readonly string[]> {
    return (await this.settingsOf(tenant))?.cors?.allowedOrigins ?? [];
  }

  /**
   * TenantConfig `meetings` over the defaults: ring and heartbeat timings, the waiting room policy. Cached
   * briefly: read by every join. `fresh` reads the stored settings now (the recording consent policy,
   * which must hold on every node from the moment it is set).
   */
  async meetingSettings(tenant: string, opts: { fresh?: boolean } = {}): Promise<TenantConfig['meetings']> {
    const s = await this.settingsOf(tenant, opts.fresh);
    const stored = Object.fromEntries(
      Object.entries(s?.meetings ?? {}).filter(([, v]) => v !== undefined && v !== null),
    );
    return { ...defaultSettings(tenant).meetings, ...stored };
  }

  /** TenantConfig `features` over the defaults, cached briefly (guest join and rapid connect are asked per join). */
  async features(tenant: string): Promise<TenantConfig['features']> {
    const s = await this.settingsOf(tenant);
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
