import { createServer, type Server } from 'node:http';
import express from 'express';
import Provider, { errors, type Configuration } from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { resourceIndicator } from '../../src/auth/oidc-realms.js';
import { freePort } from './net.js';
import type { HttpResult } from './http.js';
import type { TestNode } from './node.js';
import { Browser, authorizeIn } from './realm.js';

/** A person known to the hospital's own identity provider. */
export interface HospitalAccount {
  sub: string;
  username: string;
  password: string;
  email: string;
  emailVerified: boolean;
}

/** The service's client registered at the hospital's provider, and the API audience its tokens carry. */
export const HOSPITAL_CLIENT = {
  clientId: 'consult-web',
  clientSecret: 'hospital-registered-client-secret-0123456789',
  audience: 'consult-api',
} as const;

/** The node settings that make the service use the hospital's provider (OIDC_MODE=external). */
export function externalIdpEnv(idp: HospitalIdp): Record<string, string> {
  return {
    OIDC_MODE: 'external',
    OIDC_ISSUER_TEMPLATE: idp.template,
    OIDC_CLIENT_ID: HOSPITAL_CLIENT.clientId,
    OIDC_CLIENT_SECRET: HOSPITAL_CLIENT.clientSecret,
    OIDC_AUDIENCE: HOSPITAL_CLIENT.audience,
  };
}

export interface HospitalIdpOptions {
  /** The tenant whose issuer this is (`/hospital/{tenant}`). */
  tenant: string;
  accounts: HospitalAccount[];
  /** The service's sign-in callback, registered for the client. */
  redirectUri: string;
}

export interface HospitalIdp {
  server: Server;
  base: string;
  /** OIDC_ISSUER_TEMPLATE for the service. */
  template: string;
  close(): Promise<void>;
}

/**
 * The hospital's own OpenID provider, separate from the service: discovery, JWKS, authorization code with
 * PKCE for the service's registered client, JWT access tokens for the API audience carrying the person's
 * email, `email_verified` and `preferred_username`, and a plain login form (no consent screen).
 */
export async function startHospitalIdp(opts: HospitalIdpOptions): Promise<HospitalIdp> {
  const { tenant: TENANT, accounts: ACCOUNTS, redirectUri } = opts;
  const { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, audience: AUDIENCE } = HOSPITAL_CLIENT;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const mount = `/hospital/${TENANT}`;
  const issuer = `${base}${mount}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'hospital-1', alg: 'RS256', use: 'sig' };
  const bySub = new Map(ACCOUNTS.map((a) => [a.sub, a]));
  const claimsOf = (a: HospitalAccount) => ({
    sub: a.sub,
    name: a.username,
    preferred_username: a.username,
    email: a.email,
    email_verified: a.emailVerified,
  });
  const resource = resourceIndicator(AUDIENCE);
  const config: Configuration = {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    jwks: { keys: [jwk] } as Configuration['jwks'],
    cookies: { keys: ['hospital-cookie-key-for-tests'] },
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'] },
    scopes: ['openid', 'profile', 'email', 'api'],
    findAccount: async (_ctx, sub) => {
      const a = bySub.get(sub);
      return a ? { accountId: sub, claims: () => claimsOf(a) } : undefined;
    },
    formats: {
      customizers: {
        jwt: (_ctx, token, jwt) => {
          const t = token as { accountId?: string; sessionUid?: string };
          const a = t.accountId ? bySub.get(t.accountId) : undefined;
          if (a) Object.assign(jwt.payload, claimsOf(a));
          if (t.sessionUid) jwt.payload.sid = t.sessionUid;
        },
      },
    },
    interactions: { url: (_ctx, i) => `${mount}/interaction/${i.uid}` },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return { scope: 'api', audience: AUDIENCE, accessTokenFormat: 'jwt', accessTokenTTL: 300 };
        },
      },
    },
    ttl: { AccessToken: 300, AuthorizationCode: 60, IdToken: 300, Interaction: 300, Session: 3600, Grant: 3600 },
  };
  const provider = new Provider(issuer, config);
  const form = (uid: string, error = '') =>
    `<html><body>${error}<form method="post" action="${mount}/interaction/${uid}/login">` +
    `<input name="username"><input name="password" type="password"></form></body></html>`;

  const app = express();
  app.get(`${mount}/interaction/:uid`, async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') return void res.type('html').send(form(details.uid));
      const d = details.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      const grant = new provider.Grant({
        accountId: details.session!.accountId,
        clientId: String(details.params.client_id),
      });
      if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
      if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {}))
        grant.addResourceScope(indicator, scopes.join(' '));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    } catch (e) {
      next(e);
    }
  });
  app.post(`${mount}/interaction/:uid/login`, express.urlencoded({ extended: false }), async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      const a = ACCOUNTS.find((x) => x.username === req.body.username && x.password === req.body.password);
      if (!a) return void res.status(401).type('html').send(form(details.uid, 'Invalid'));
      await provider.interactionFinished(req, res, { login: { accountId: a.sub } }, { mergeWithLastSubmission: false });
    } catch (e) {
      next(e);
    }
  });
  app.use(mount, provider.callback());
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    server,
    base,
    template: `${base}/hospital/{tenant}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Signs `account` in at the hospital's provider (authorization code with PKCE, through openid-client) and
 * hands the callback to the service's `POST /api/account/login`: the service's answer.
 */
export async function signInAtHospital(
  node: TestNode,
  idp: HospitalIdp,
  tenant: string,
  redirectUri: string,
  account: Pick<HospitalAccount, 'username' | 'password'>,
): Promise<HttpResult> {
  const a = await authorizeIn(node, new Browser(idp.base), tenant, redirectUri, account);
  return node.http.post('/api/account/login', {
    tenant,
    body: { method: 'code', callbackUrl: a.callbackUrl, codeVerifier: a.codeVerifier, state: a.state },
  });
}
