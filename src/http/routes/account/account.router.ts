import type { Request } from 'express';
import type { Infra } from '../../../app/index.js';
import { byIp, byBodyField, type RateLimitRule } from '../../../edge/rate-limit.js';
import type { SignInContext } from '../../../core/identity/sign-in.service.js';
import { op, type RouteGroup } from '../route-spec.js';
import * as S from './account.schema.js';

function ctx(req: Request): SignInContext {
  return { ip: req.ip, userAgent: req.get('user-agent') };
}

const signInPerIp = (infra: Infra): RateLimitRule => ({
  bucket: 'signin-ip',
  limit: infra.config.limits.signinPerIp,
  windowSeconds: infra.config.limits.windowSeconds,
  key: byIp,
});
const signInPerAccount = (infra: Infra): RateLimitRule => ({
  bucket: 'signin-account',
  limit: infra.config.limits.signinPerAccount,
  windowSeconds: infra.config.limits.windowSeconds,
  key: byBodyField('username'),
});
const perIpOnly = (infra: Infra) => [signInPerIp(infra)];
const noStore = { 'Cache-Control': { description: 'no-store', schema: { type: 'string' } } };

/** Public sign-in endpoints (rate limited): login, QR code, extension, offline login, refresh, org, back-channel logout. */
const signInRoutes = [
  op({
    operationId: 'account.login',
    requires: 'public',
    signIn: true,
    note: 'authorization code + PKCE, approved QR code, or device PIN',
    method: 'post',
    path: '/login',
    body: S.LoginRequest,
    response: S.LoginResponse,
    rateLimit: (infra) => [signInPerIp(infra), signInPerAccount(infra)],
    summary:
      'Sign in: authorization code + PKCE, an approved QR login code, or a device PIN (LoginRequest -> LoginResponse)',
    errors: [
      'invalid_credentials',
      'login_code_not_found',
      'login_code_expired',
      'login_code_used',
      'login_code_pending',
      'login_code_refused',
      'invalid_state',
      'account_locked',
      'service_unavailable',
    ],
    example: { request: { method: 'pin', username: 'pat', pin: '482913' } },
    handle: (s, { req, body }) => s.auth.signIn.login(req.tenant!.name, body, ctx(req)),
  }),
  op({
    operationId: 'account.qrCode',
    requires: 'public',
    signIn: true,
    links: {
      extend: {
        operationId: 'account.extendLoginCode',
        requestBody: { code: '$response.body#/code', pollSecret: '$response.body#/pollSecret' },
      },
      approve: { operationId: 'account.approveLoginCode', requestBody: { code: '$response.body#/code' } },
    },
    method: 'get',
    path: '/qrCode',
    query: S.GenerateQRCodeCommand,
    response: S.GeneratedLoginCode,
    status: 201,
    rateLimit: perIpOnly,
    summary: 'Generate a QR login code (GenerateQRCodeCommand); the app shows it and polls login with the poll secret',
    errors: ['service_unavailable'],
    handle: async (s, { req, query }) => {
      const { loginApproveUrl } = await s.webApp.pages(req.tenant!.name);
      return s.auth.loginCodes.create(req.tenant!.name, query, loginApproveUrl, ctx(req));
    },
  }),
  op({
    operationId: 'account.extendLoginCode',
    requires: 'public',
    signIn: true,
    note: 'proved by the login code poll secret',
    method: 'post',
    path: '/extendLoginCode',
    body: S.ExtendLoginCodeCommand,
    response: S.ExtendedLoginCode,
    rateLimit: perIpOnly,
    summary: 'Extend the validity of a pending login code (proved by its poll secret)',
    errors: ['login_code_not_found', 'login_code_expired', 'login_code_used', 'login_code_refused', 'invalid_state'],
    handle: (s, { req, body }) => s.auth.loginCodes.extend(req.tenant!.name, body),
  }),
  op({
    operationId: 'account.offlineLogin',
    requires: 'public',
    signIn: true,
    note: 'proved by the offline token',
    method: 'post',
    path: '/offlineLogin',
    body: S.OfflineLoginRequest,
    response: S.LoginResponse,
    rateLimit: perIpOnly,
    summary: 'Sign in with an offline token (limited permissions)',
    errors: ['invalid_credentials', 'session_revoked'],
    handle: (s, { req, body }) => s.auth.offlineTokens.login(req.tenant!.name, body.token, ctx(req)),
  }),
  op({
    operationId: 'account.refresh',
    requires: 'public',
    signIn: true,
    note: 'proved by the refresh token',
    method: 'post',
    path: '/refresh',
    body: S.RefreshRequest,
    response: S.LoginMeta,
    summary: 'Refresh the session with its refresh token (rotated); returns LoginMeta',
    errors: ['invalid_credentials', 'session_revoked'],
    handle: (s, { req, body }) => s.auth.sessions.refresh(req.tenant!.name, body.refreshToken),
  }),
  // Only the general per-address limit: an IdP ending many sessions at once posts one logout token per
  // session, and a signed token cannot be guessed, so the sign-in budget does not apply.
  op({
    operationId: 'account.backchannelLogout',
    requires: 'public',
    signIn: true,
    note: "OIDC back-channel logout from the realm; proved by the logout token signed with the realm's key",
    method: 'post',
    path: '/backchannel-logout',
    body: S.BackchannelLogoutRequest,
    form: true,
    empty: true,
    headers: noStore,
    summary: 'OpenID Connect back-channel logout: the realm posts a signed logout token; the sessions it names end',
    errors: ['logout_token_invalid'],
    handle: async (s, { req, res, body }) => {
      await s.auth.backchannelLogout.receive(req.tenant!.name, body.logout_token, req.ip);
      res.set('cache-control', 'no-store').status(200).end();
    },
  }),
  op({
    operationId: 'account.org',
    requires: 'public',
    signIn: true,
    method: 'post',
    path: '/org',
    body: S.OrgRequest,
    response: S.OrgInfo,
    summary:
      "Org details of the tenant: display name and the realm's issuer, client id, audience, scopes and the redirect URI to use",
    handle: async (s, { req }) => s.auth.account.org(req.tenant!, await s.webApp.pages(req.tenant!.name)),
  }),
];

/** Endpoints of a signed-in principal: approval, logout, PIN, offline tokens, impersonation, roles. */
const principalRoutes = [
  op({
    operationId: 'account.approveLoginCode',
    requires: 'authenticated',
    note: 'a signed-in web user approves a QR login code for themselves',
    method: 'post',
    path: '/approveLoginCode',
    body: S.ApproveLoginCodeCommand,
    response: S.ApprovedLoginCode,
    summary: 'Approve a QR login code for oneself (the app polling it is then signed in as the caller)',
    errors: [
      'forbidden',
      'login_code_not_found',
      'login_code_expired',
      'login_code_used',
      'login_code_refused',
      'invalid_state',
    ],
    handle: (s, { p, body }) => s.auth.loginCodes.approve(p, body.code),
  }),
  op({
    operationId: 'account.refuseLoginCode',
    requires: 'authenticated',
    note: 'a signed-in web user refuses a QR login code; the polling device gets login_code_refused',
    method: 'post',
    path: '/refuseLoginCode',
    body: S.RefuseLoginCodeCommand,
    response: S.RefusedLoginCode,
    summary: 'Refuse a QR login code (the app polling it then gets login_code_refused)',
    errors: ['login_code_not_found', 'login_code_expired', 'login_code_used', 'login_code_refused', 'invalid_state'],
    handle: (s, { p, body }) => s.auth.loginCodes.refuse(p, body.code),
  }),
  op({
    operationId: 'account.loginCode',
    requires: 'authenticated',
    note: 'the approval page reads which device asks (the code alone, as shown by the QR image)',
    method: 'get',
    path: '/loginCode',
    query: S.LoginCodeQuery,
    response: S.LoginCodeInfo,
    summary: "Which device asks to sign in with a QR login code, and the code's state (for the approval page)",
    errors: ['login_code_not_found'],
    handle: (s, { p, query }) => s.auth.loginCodes.info(p, query.code),
  }),
  op({
    operationId: 'account.logout',
    requires: 'authenticated',
    note: "own sessions; another user's needs users:manage",
    method: 'post',
    path: '/:userId/logout',
    params: S.LogoutParams,
    response: S.LogoutResult,
    summary: "Log a user out: one's own session, or every session of another user (users:manage)",
    errors: ['user_not_found'],
    handle: (s, { p, params, req }) => s.auth.account.logout(p, params.userId, req.ip),
  }),
  op({
    operationId: 'account.resetPin',
    requires: 'profile:write',
    note: "another user's PIN needs users:manage",
    method: 'post',
    path: '/resetPin',
    body: S.ResetPinCommand,
    response: S.PinResult,
    summary: "Set one's own PIN, or set or clear another user's (users:manage) (ResetPinCommand)",
    errors: ['forbidden', 'user_not_found', 'pin_policy_violation'],
    handle: (s, { p, body }) => s.auth.pins.reset(p, body),
  }),
  op({
    operationId: 'account.offlineToken',
    requires: 'account:offline',
    links: {
      revoke: { operationId: 'account.revokeOfflineToken', requestBody: { id: '$response.body#/id' } },
      login: { operationId: 'account.offlineLogin', requestBody: { token: '$response.body#/token' } },
    },
    method: 'post',
    path: '/offlineToken',
    query: S.OfflineTokenQuery,
    response: S.IssuedOfflineToken,
    status: 201,
    summary: 'Issue an offline token for a stated purpose',
    errors: ['forbidden'],
    handle: (s, { p, query }) => s.auth.offlineTokens.issue(p, query.purpose),
  }),
  op({
    operationId: 'account.revokeOfflineToken',
    requires: 'account:offline',
    method: 'post',
    path: '/revokeOfflineToken',
    body: S.RevokeOfflineTokenCommand,
    response: S.RevokedOfflineToken,
    summary: "Revoke one of the caller's offline tokens and the sessions signed in with it",
    errors: ['not_found'],
    handle: (s, { p, body }) => s.auth.offlineTokens.revoke(p, body.id),
  }),
  op({
    operationId: 'account.impersonate',
    requires: 'account:impersonate',
    method: 'post',
    path: '/impersonate',
    body: S.ImpersonateCommand,
    response: S.LoginResponse,
    summary: "Impersonate another user (support flows); audited, capped by the caller's permissions",
    errors: ['forbidden', 'user_not_found', 'bad_request'],
    handle: (s, { p, body, req }) => s.auth.impersonation.start(p, body, ctx(req)),
  }),
  op({
    operationId: 'account.assignRole',
    requires: 'users:manage',
    method: 'post',
    path: '/assignRole',
    body: S.AssignRoleCommand,
    response: S.RoleAssigned,
    summary: 'Assign a role to a user of the tenant',
    errors: ['user_not_found'],
    handle: (s, { p, body }) => s.auth.account.assignRole(p, body.userId, body.role),
  }),
];

/** /api/account: sign-in, sessions, PIN, offline tokens, impersonation (docs/auth.md). */
export const accountRoutes: RouteGroup = {
  base: '/api/account',
  tag: 'Account',
  routes: [...signInRoutes, ...principalRoutes],
};

/** GET /.well-known/jwks.json: public keys of internal tokens (any host, no tenant needed). */
export const jwksRoutes: RouteGroup = {
  base: '',
  tag: 'Account',
  routes: [
    op({
      operationId: 'account.jwks',
      requires: 'public',
      note: 'public keys of internal tokens',
      method: 'get',
      path: '/.well-known/jwks.json',
      response: S.Jwks,
      anyHost: true,
      headers: { 'Cache-Control': { description: 'public, max-age=300', schema: { type: 'string' } } },
      summary: 'Public keys of the internal tokens (JWKS), to verify them offline',
      handle: async (s, { res }) => {
        res.set('cache-control', 'public, max-age=300');
        return s.auth.signingKeys.jwks();
      },
    }),
  ],
};
