import Provider, { errors, type Adapter, type Configuration } from 'oidc-provider';
import type { RealmAccounts } from '../auth/realm-accounts.js';
import type { IdpSecrets } from '../auth/idp-secrets.js';
import { resourceIndicator } from '../auth/oidc-realms.js';
import { EMBEDDED_REALM_SESSION_SECONDS } from '../auth/realm-sessions.js';

export interface RealmOptions {
  tenant: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  audience: string;
  accessTokenTtlSeconds: number;
  secrets: IdpSecrets;
  /** The realm's storage (src/data/stores/realm-records.store.ts): one adapter per model. */
  adapter: (model: string) => Adapter;
  accounts: Pick<RealmAccounts, 'bySubject'>;
}

/** The resource-server scope our API accepts in realm access tokens. */
export const API_SCOPE = 'api';

/**
 * One standards OIDC provider for one tenant realm: authorization code with PKCE for the service's
 * client, JWT access tokens for the API audience (resource indicators), accounts = the tenant's users.
 * Consent is implicit for this first-party client (the interaction router grants what is asked).
 */
export function createRealmProvider(o: RealmOptions): Provider {
  const resource = resourceIndicator(o.audience);
  const config: Configuration = {
    adapter: o.adapter,
    clients: [
      {
        client_id: o.clientId,
        client_secret: o.clientSecret,
        redirect_uris: o.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    jwks: o.secrets.jwks as Configuration['jwks'],
    cookies: { keys: o.secrets.cookieKeys },
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email'] },
    scopes: ['openid', 'profile', 'email', 'offline_access', API_SCOPE],
    findAccount: async (_ctx, sub) => {
      const user = await o.accounts.bySubject(o.tenant, sub);
      if (!user || user.status !== 'active') return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          name: user.displayName,
          preferred_username: user.username,
          ...(user.email ? { email: user.email } : {}),
        }),
      };
    },
    // Realm refresh tokens are single use: a replayed one revokes its grant (and, through the
    // 'grant.revoked' listener of IdpRealms, the realm session and the service sessions behind it).
    rotateRefreshToken: true,
    // Access tokens name their realm session (`sid`: the session's uid unless the provider set a
    // per-client sid), so a sign-out can refuse exactly that session's tokens.
    formats: {
      customizers: {
        jwt: (_ctx, token, jwt) => {
          const t = token as { sid?: unknown; sessionUid?: unknown };
          const sid = t.sid ?? t.sessionUid;
          if (typeof sid === 'string') jwt.payload.sid = sid;
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `${new URL(o.issuer).pathname}/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return {
            scope: API_SCOPE,
            audience: o.audience,
            accessTokenFormat: 'jwt',
            accessTokenTTL: o.accessTokenTtlSeconds,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    ttl: {
      AccessToken: o.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: EMBEDDED_REALM_SESSION_SECONDS,
      Grant: EMBEDDED_REALM_SESSION_SECONDS,
      RefreshToken: EMBEDDED_REALM_SESSION_SECONDS,
    },
    renderError: async (ctx, out) => {
      ctx.type = 'json';
      ctx.body = { error: out.error, error_description: out.error_description };
    },
  };
  return new Provider(o.issuer, config);
}
