import type Provider from 'oidc-provider';
import type { Adapter } from 'oidc-provider';
import type { Config } from '../../config/config.js';
import type { RealmAccounts } from '../realm-accounts.js';
import { signingView, type IdpSecretsService, type IdpSecretsView, type StoredIdpSecrets } from './idp-secrets.js';
import { createRealmProvider } from './provider.factory.js';

export interface IdpRealmsDeps {
  config: Config;
  /** The tenant realm's storage, shared by every node (services.auth.realmStorage). */
  storage(tenant: string): (model: string) => Adapter;
  /** The realms' signing and cookie keys (sealed in Redis). */
  secrets: IdpSecretsService;
  /** The tenant's users, as the realm's provider finds them by subject. */
  accounts: Pick<RealmAccounts, 'bySubject'>;
  /** Redirect URIs registered for the service's client (src/core/web-app-urls.ts); a change rebuilds the realm. */
  redirectUris(tenant: string): Promise<string[]>;
  /**
   * A grant of the realm was revoked by the provider itself (a replayed refresh token, a token
   * revocation request): the realm session `sid` of `subject` must end in the service too.
   */
  onGrantRevoked(tenant: string, subject: string, sid: string): Promise<void>;
  onError(err: unknown): void;
  /** How often the stored keys are re-read for another node's rotation (default 5 s). */
  secretsCheckMs?: number;
}

/**
 * Embedded realms, created lazily on first use of a tenant and kept for the life of the node, or until
 * the tenant's registered redirect URIs change (TenantConfig `webApp`) or the realms' signing keys do
 * (a rotation on any node, seen within `secretsCheckMs`; a published key's activation time): the realm
 * is then built again (its sessions, grants and keys live in Redis, so nothing of a sign-in in
 * progress is lost).
 */
export class IdpRealms {
  private readonly providers = new Map<string, { uris: string; keys: string; provider: Promise<Provider> }>();
  private cache?: { stored: StoredIdpSecrets; raw: string; checkedAt: number };
  private loading?: Promise<void>;

  constructor(private readonly deps: IdpRealmsDeps) {}

  async get(tenant: string): Promise<Provider> {
    const [redirectUris, view] = await Promise.all([this.deps.redirectUris(tenant), this.secrets()]);
    const uris = redirectUris.join(' ');
    let entry = this.providers.get(tenant);
    if (!entry || entry.uris !== uris || entry.keys !== view.fingerprint) {
      const created = { uris, keys: view.fingerprint, provider: this.create(tenant, redirectUris, view) };
      this.providers.set(tenant, created);
      created.provider.catch(() => {
        if (this.providers.get(tenant) === created) this.providers.delete(tenant);
      });
      entry = created;
    }
    return entry.provider;
  }

  /** The keys as a provider built now sees them; re-read from Redis at most every `secretsCheckMs`. */
  private async secrets(): Promise<IdpSecretsView> {
    if (!this.cache || Date.now() - this.cache.checkedAt >= (this.deps.secretsCheckMs ?? 5000)) {
      this.loading ??= this.reload().finally(() => (this.loading = undefined));
      await this.loading;
    }
    return signingView(this.cache!.stored, Date.now());
  }

  private async reload(): Promise<void> {
    const was = this.cache;
    // Unchanged since the last read (the usual case): no decryption.
    if (was && (await this.deps.secrets.raw()) === was.raw) this.cache = { ...was, checkedAt: Date.now() };
    else this.cache = { ...(await this.deps.secrets.loadStored()), checkedAt: Date.now() };
  }

  private async create(tenant: string, redirectUris: string[], view: IdpSecretsView): Promise<Provider> {
    const { config } = this.deps;
    const provider = createRealmProvider({
      tenant,
      issuer: config.auth.oidc.issuerTemplate.replace('{tenant}', tenant),
      clientId: config.auth.oidc.clientId,
      clientSecret: config.auth.oidc.clientSecret,
      redirectUris,
      audience: config.auth.oidc.audience,
      accessTokenTtlSeconds: config.auth.accessTokenTtlSeconds,
      secrets: view.secrets,
      adapter: this.deps.storage(tenant),
      accounts: this.deps.accounts,
    });
    // X-Forwarded-* reaching the provider were rewritten from Express's TRUST_PROXY view (idp.role.ts).
    provider.proxy = true;
    provider.on('grant.revoked', (ctx) => {
      const entities = ctx.oidc?.entities as
        Record<string, { sid?: unknown; sessionUid?: unknown; accountId?: unknown } | undefined> | undefined;
      const token = entities?.RefreshToken ?? entities?.AccessToken;
      const sid = token?.sid ?? token?.sessionUid;
      if (typeof sid === 'string' && typeof token?.accountId === 'string') {
        this.deps.onGrantRevoked(tenant, token.accountId, sid).catch((err) => this.deps.onError(err));
      }
    });
    return provider;
  }
}
