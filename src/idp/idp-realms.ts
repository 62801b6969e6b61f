import type Provider from 'oidc-provider';
import type { Adapter } from 'oidc-provider';
import type { Config } from '../config/config.js';
import type { RealmAccounts } from '../auth/realm-accounts.js';
import {
  signingView,
  type IdpSecretsService,
  type IdpSecretsView,
  type StoredIdpSecrets,
} from '../auth/idp-secrets.js';
import { createRealmProvider } from './provider.factory.js';

export interface IdpRealmsDeps {
  config: Config;
  /** The tenant realm's storage, shared by every node (services.auth.realmStorage). */
  storage(tenant: string): (model: string) => Adapter;
  /** The realms' signing and cookie keys (sealed in Redis). */
  secrets: IdpSecretsService;
  /** The tenant's users, as the realm's provider finds them by subject. */
  accounts: Pick<RealmAccounts, 'bySubject'>;
  /** Redirect URIs registered for the service's client (src/core/tenants/web-app-urls.ts); a change rebuilds the realm. */
  redirectUris(tenant: string): Promise<string[]>;
  /**
   * A realm session ended in the provider itself (the realm's logout page) or one of its grants was
   * revoked there (a replayed refresh token, a token revocation request): the realm session `sid` of
   * `subject` must end in the service too.
   */
  onRealmSessionEnded(
    tenant: string,
    subject: string,
    sid: string,
    reason: 'realm_logout' | 'realm_grant_revoked',
  ): Promise<void>;
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
    // The service's sessions of an ended realm session end before the realm answers the request that
    // ended it (the logout page's confirmation, the token request of a replayed refresh token).
    const ending = new WeakMap<object, Promise<void>[]>();
    provider.use(async (ctx, next) => {
      const mine: Promise<void>[] = [];
      ending.set(ctx, mine);
      await next();
      await Promise.all(mine);
    });
    const end = (
      ctx: object,
      ended: { accountId: string; sid: string }[],
      reason: 'realm_logout' | 'realm_grant_revoked',
    ) => {
      for (const e of ended) {
        const done = this.deps.onRealmSessionEnded(tenant, e.accountId, e.sid, reason);
        ending.get(ctx)?.push(done.catch((err) => this.deps.onError(err)));
      }
    };
    provider.on('grant.revoked', (ctx, grantId: string) => {
      const ended = revokedRealmSession(ctx.oidc as unknown as RevokingContext | undefined, grantId);
      end(ctx, ended ? [ended] : [], 'realm_grant_revoked');
    });
    // Logout at the realm (RP-initiated, "sign me out" everywhere): the browser session is destroyed,
    // while grants holding offline access survive it, so no grant.revoked says which sessions ended.
    provider.on('end_session.success', (ctx) =>
      end(ctx, destroyedRealmSessions(ctx.oidc as unknown as RevokingContext), 'realm_logout'),
    );
    return provider;
  }
}

/** What oidc-provider's context holds when it revokes a grant (only the parts read here). */
interface RevokingContext {
  entities?: Record<string, { sid?: unknown; sessionUid?: unknown; accountId?: unknown } | undefined>;
  session?: {
    destroyed?: boolean;
    accountId?: unknown;
    uid?: unknown;
    authorizations?: Record<string, { grantId?: unknown; sid?: unknown } | undefined>;
  };
}

/**
 * The realm session behind a revoked grant: from the token that revoked it (a replayed refresh token, a
 * revocation request), or else from the browser session that holds the grant (the realm's own logout,
 * RP-initiated: the session ends and each of its clients' grants is revoked). The `sid` is the one the
 * realm's tokens carry (the client's sid, else the session's uid).
 */
export function revokedRealmSession(
  oidc: RevokingContext | undefined,
  grantId: string,
): { accountId: string; sid: string } | undefined {
  const token = oidc?.entities?.RefreshToken ?? oidc?.entities?.AccessToken;
  const tokenSid = token?.sid ?? token?.sessionUid;
  if (typeof tokenSid === 'string' && typeof token?.accountId === 'string')
    return { accountId: token.accountId, sid: tokenSid };
  const session = oidc?.session;
  if (typeof session?.accountId !== 'string') return undefined;
  const held = Object.values(session.authorizations ?? {}).find((a) => a?.grantId === grantId);
  if (!held) return undefined;
  const sid = held.sid ?? session.uid;
  return typeof sid === 'string' ? { accountId: session.accountId, sid } : undefined;
}

/** The `sid`s of a realm session the realm's logout destroyed: its uid and each client's sid. */
export function destroyedRealmSessions(oidc: RevokingContext | undefined): { accountId: string; sid: string }[] {
  const session = oidc?.session;
  if (!session?.destroyed || typeof session.accountId !== 'string') return [];
  const sids = [session.uid, ...Object.values(session.authorizations ?? {}).map((a) => a?.sid)];
  const accountId = session.accountId;
  return [...new Set(sids.filter((s): s is string => typeof s === 'string'))].map((sid) => ({ accountId, sid }));
}
