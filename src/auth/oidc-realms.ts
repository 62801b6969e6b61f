import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { AppError } from '../kernel/errors.js';
import { mapJoseError } from './internal-tokens.js';

/** Algorithms accepted on identity-provider tokens; `none` and HMAC (key confusion) never are. */
export const IDP_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

/**
 * The RFC 8707 resource indicator naming our API: the audience itself when it is an absolute URI,
 * otherwise `urn:<audience>` (indicators must be absolute URIs; the token's `aud` stays the audience).
 */
export function resourceIndicator(audience: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(audience) ? audience : `urn:${audience}`;
}

export interface OidcRealmsDeps {
  /** Issuer URL with a `{tenant}` placeholder (embedded: `${publicUrl}/realms/{tenant}`). */
  issuerTemplate: string;
  clientId: string;
  clientSecret: string;
  audience: string;
  /**
   * A token naming a key the cached JWKS lacks makes the realm's JWKS be fetched again, at most once
   * per this many seconds (a rotation at the IdP is seen at the first token it signs).
   */
  jwksCooldownSeconds?: number;
}

interface Realm {
  config: oidc.Configuration;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

/**
 * One OIDC realm per tenant: discovery through openid-client, cached per realm (a failed discovery is
 * not cached), the realm's JWKS for verifying its access tokens, and the code exchange of sign-in.
 */
export class OidcRealms {
  private readonly realms = new Map<string, Promise<Realm>>();
  private readonly issuerPattern: RegExp;

  constructor(private readonly deps: OidcRealmsDeps) {
    const [before, after] = deps.issuerTemplate.split('{tenant}') as [string, string];
    this.issuerPattern = new RegExp(`^${escape(before)}([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)${escape(after)}$`);
  }

  get clientId(): string {
    return this.deps.clientId;
  }

  get audience(): string {
    return this.deps.audience;
  }

  issuerFor(tenant: string): string {
    return this.deps.issuerTemplate.replace('{tenant}', tenant);
  }

  /** The tenant whose realm issued `iss`, or undefined when `iss` is no realm of ours. */
  tenantOfIssuer(iss: string): string | undefined {
    return this.issuerPattern.exec(iss)?.[1];
  }

  async configuration(tenant: string): Promise<oidc.Configuration> {
    return (await this.realm(tenant)).config;
  }

  /** Verifies an IdP access token: realm JWKS, algorithm allow-list, issuer, audience, expiry. */
  async verify(tenant: string, token: string): Promise<JWTPayload> {
    const realm = await this.realm(tenant);
    try {
      const { payload } = await jwtVerify(token, realm.jwks, {
        issuer: this.issuerFor(tenant),
        audience: this.deps.audience,
        algorithms: IDP_ALGORITHMS,
        requiredClaims: ['sub', 'exp'],
      });
      return payload;
    } catch (e) {
      throw mapJoseError(e);
    }
  }

  /**
   * Verifies an OpenID Connect Back-Channel Logout token: realm JWKS, algorithm allow-list, issuer,
   * audience = our client id, issued within `maxAgeSeconds` (and not in the future beyond the tolerance).
   * The logout-specific claims (events, nonce, sid/sub, jti) are checked by the caller.
   */
  async verifyLogoutToken(tenant: string, token: string, maxAgeSeconds: number): Promise<JWTPayload> {
    const realm = await this.realm(tenant);
    const { payload } = await jwtVerify(token, realm.jwks, {
      issuer: this.issuerFor(tenant),
      audience: this.deps.clientId,
      algorithms: IDP_ALGORITHMS,
      requiredClaims: ['iat', 'jti'],
      maxTokenAge: maxAgeSeconds,
      clockTolerance: 60,
    });
    if (typeof payload.iat === 'number' && payload.iat > Math.floor(Date.now() / 1000) + 60)
      throw new Error('logout token issued in the future');
    return payload;
  }

  /**
   * Authorization-code exchange with PKCE: `callbackUrl` is the redirect the browser landed on
   * (code, state, iss). Returns the realm's access token (JWT for our audience).
   */
  async exchangeCode(
    tenant: string,
    callbackUrl: URL,
    codeVerifier: string,
    expectedState?: string,
  ): Promise<{ accessToken: string }> {
    const config = await this.configuration(tenant);
    try {
      const tokens = await oidc.authorizationCodeGrant(
        config,
        callbackUrl,
        { pkceCodeVerifier: codeVerifier, expectedState, idTokenExpected: true },
        { resource: resourceIndicator(this.deps.audience) },
      );
      return { accessToken: tokens.access_token };
    } catch (e) {
      const err = e as { error?: string; code?: string };
      throw new AppError(
        'invalid_credentials',
        `Authorization code exchange failed${err.error ? ` (${err.error})` : ''}`,
        { cause: e },
      );
    }
  }

  private realm(tenant: string): Promise<Realm> {
    let p = this.realms.get(tenant);
    if (!p) {
      p = this.discover(tenant);
      this.realms.set(tenant, p);
      p.catch(() => this.realms.delete(tenant));
    }
    return p;
  }

  private async discover(tenant: string): Promise<Realm> {
    const issuer = new URL(this.issuerFor(tenant));
    const insecure = issuer.protocol === 'http:' && isLoopback(issuer.hostname);
    try {
      const config = await oidc.discovery(
        issuer,
        this.deps.clientId,
        { client_secret: this.deps.clientSecret },
        oidc.ClientSecretBasic(this.deps.clientSecret),
        insecure ? { execute: [oidc.allowInsecureRequests] } : undefined,
      );
      const jwksUri = config.serverMetadata().jwks_uri;
      if (!jwksUri) throw new Error('realm publishes no jwks_uri');
      return {
        config,
        jwks: createRemoteJWKSet(new URL(jwksUri), {
          cacheMaxAge: 10 * 60_000,
          cooldownDuration: (this.deps.jwksCooldownSeconds ?? 30) * 1000,
        }),
      };
    } catch (e) {
      throw new AppError('service_unavailable', `Identity provider realm '${tenant}' is unavailable`, {
        cause: e,
        retryAfter: 5,
      });
    }
  }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host.endsWith('.localhost');
}
