import type Provider from 'oidc-provider';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/config.js';
import type { TenantDb } from '../../data/mongo.js';
import type { IdpSecrets, IdpSecretsStore } from './idp-secrets.js';
import { createRealmProvider } from './provider.factory.js';

export interface IdpRealmsDeps {
  config: Config;
  redis: Redis;
  keys: { idpStore(tenant: string): string };
  /** The realms' signing and cookie keys (sealed in Redis). */
  secrets: IdpSecretsStore;
  tenantDb(tenant: string): TenantDb;
  /**
   * A grant of the realm was revoked by the provider itself (a replayed refresh token, a token
   * revocation request): the realm session `sid` of `subject` must end in the service too.
   */
  onGrantRevoked(tenant: string, subject: string, sid: string): Promise<void>;
  onError(err: unknown): void;
}

/** Redirect URIs registered for the service's client: the public URL and the tenant's own host. */
export function redirectUrisFor(config: Config, tenant: string): string[] {
  const pub = new URL(config.http.publicUrl);
  const tenantHost = `${pub.protocol}//${tenant}.${config.http.baseDomain}${pub.port ? `:${pub.port}` : ''}`;
  return [`${config.http.publicUrl.replace(/\/$/, '')}/auth/callback`, `${tenantHost}/auth/callback`];
}

/** Embedded realms, created lazily on first use of a tenant and kept for the life of the node. */
export class IdpRealms {
  private readonly providers = new Map<string, Promise<Provider>>();
  private secrets?: Promise<IdpSecrets>;

  constructor(private readonly deps: IdpRealmsDeps) {}

  get(tenant: string): Promise<Provider> {
    let p = this.providers.get(tenant);
    if (!p) {
      p = this.create(tenant);
      this.providers.set(tenant, p);
      p.catch(() => this.providers.delete(tenant));
    }
    return p;
  }

  private async create(tenant: string): Promise<Provider> {
    this.secrets ??= this.deps.secrets.load();
    this.secrets.catch(() => (this.secrets = undefined));
    const { config } = this.deps;
    const provider = createRealmProvider({
      tenant, issuer: config.auth.oidc.issuerTemplate.replace('{tenant}', tenant), clientId: config.auth.oidc.clientId, clientSecret: config.auth.oidc.clientSecret,
      redirectUris: redirectUrisFor(config, tenant), audience: config.auth.oidc.audience, accessTokenTtlSeconds: config.auth.accessTokenTtlSeconds,
      secrets: await this.secrets, redis: this.deps.redis, storePrefix: this.deps.keys.idpStore(tenant), tenantDb: this.deps.tenantDb(tenant),
    });
    // X-Forwarded-* reaching the provider were rewritten from Express's TRUST_PROXY view (idp.role.ts).
    provider.proxy = true;
    provider.on('grant.revoked', (ctx) => {
      const entities = ctx.oidc?.entities as Record<string, { sid?: unknown; sessionUid?: unknown; accountId?: unknown } | undefined> | undefined;
      const token = entities?.RefreshToken ?? entities?.AccessToken;
      const sid = token?.sid ?? token?.sessionUid;
      if (typeof sid === 'string' && typeof token?.accountId === 'string') {
        this.deps.onGrantRevoked(tenant, token.accountId, sid).catch((err) => this.deps.onError(err));
      }
    });
    return provider;
  }
}
