import { Router, type Request, type RequestHandler } from 'express';
import type { Infra, Services } from '../../../composition.js';
import { guard, principalOf } from '../../middleware/auth.js';
import { rateLimit, byIp, byBodyField, type RateLimitRule } from '../../middleware/rate-limit.js';
import type { AuthServices } from '../../../auth/auth-services.js';
import { requireTenant } from '../../middleware/tenant.js';
import { parse } from '../../validate.js';
import type { SignInContext } from '../../../core/sign-in.service.js';
import * as S from './account.schema.js';

function ctx(req: Request): SignInContext {
  return { ip: req.ip, userAgent: req.get('user-agent') };
}

/** /api/account: sign-in, sessions, PIN, offline tokens, impersonation (docs/auth.md). */
export function accountRouter(infra: Infra, services: Services): Router {
  const l = infra.config.limits;
  const limiter = { redis: infra.redis, keyFor: infra.keys.rateLimit };
  const perIp: RateLimitRule = { bucket: 'signin-ip', limit: l.signinPerIp, windowSeconds: l.windowSeconds, key: byIp };
  const perAccount: RateLimitRule = { bucket: 'signin-account', limit: l.signinPerAccount, windowSeconds: l.windowSeconds, key: byBodyField('username') };
  const r = Router();
  r.use(requireTenant);
  signInRoutes(r, services.auth, { signIn: rateLimit(limiter, [perIp, perAccount]), ip: rateLimit(limiter, [perIp]) });
  accountRoutes(r, services.auth);
  return r;
}

/** Public sign-in endpoints (rate limited): login, QR code, extension, offline login, refresh, org. */
function signInRoutes(r: Router, a: AuthServices, limit: { signIn: RequestHandler; ip: RequestHandler }): void {
  r.post('/login', guard('account.login'), limit.signIn, async (req, res) => {
    res.json(await a.signIn.login(req.tenant!.name, parse(S.LoginRequest, req.body), ctx(req)));
  });
  r.get('/qrCode', guard('account.qrCode'), limit.ip, async (req, res) => {
    const q = parse(S.GenerateQRCodeCommand, req.query, 'query');
    res.status(201).json(await a.loginCodes.create(req.tenant!.name, q, `${req.protocol}://${req.get('host')}`));
  });
  r.post('/extendLoginCode', guard('account.extendLoginCode'), limit.ip, async (req, res) => {
    res.json(await a.loginCodes.extend(req.tenant!.name, parse(S.ExtendLoginCodeCommand, req.body)));
  });
  r.post('/offlineLogin', guard('account.offlineLogin'), limit.ip, async (req, res) => {
    res.json(await a.offlineTokens.login(req.tenant!.name, parse(S.OfflineLoginRequest, req.body).token, ctx(req)));
  });
  r.post('/refresh', guard('account.refresh'), async (req, res) => {
    res.json(await a.sessions.refresh(req.tenant!.name, parse(S.RefreshRequest, req.body).refreshToken));
  });
  // Only the general per-address limit (app.ts): an IdP ending many sessions at once posts one logout
  // token per session, and a signed token cannot be guessed, so the sign-in budget does not apply.
  r.post('/backchannel-logout', guard('account.backchannelLogout'), async (req, res) => {
    const body = parse(S.BackchannelLogoutRequest, req.body);
    await a.backchannelLogout.receive(req.tenant!.name, body.logout_token, req.ip);
    res.set('cache-control', 'no-store').status(200).end();
  });
  r.post('/org', guard('account.org'), (req, res) => {
    parse(S.OrgRequest, req.body);
    res.json(a.account.org(req.tenant!));
  });
}

/** Endpoints of a signed-in principal: approval, logout, PIN, offline tokens, impersonation, roles. */
function accountRoutes(r: Router, a: AuthServices): void {
  r.post('/approveLoginCode', guard('account.approveLoginCode'), async (req, res) => {
    res.json(await a.loginCodes.approve(principalOf(req), parse(S.ApproveLoginCodeCommand, req.body).code));
  });
  r.post('/:userId/logout', guard('account.logout'), async (req, res) => {
    res.json(await a.account.logout(principalOf(req), parse(S.LogoutParams, req.params, 'params').userId, req.ip));
  });
  r.post('/resetPin', guard('account.resetPin'), async (req, res) => {
    res.json(await a.pins.reset(principalOf(req), parse(S.ResetPinCommand, req.body)));
  });
  r.post('/offlineToken', guard('account.offlineToken'), async (req, res) => {
    res.status(201).json(await a.offlineTokens.issue(principalOf(req), parse(S.OfflineTokenQuery, req.query, 'query').purpose));
  });
  r.post('/revokeOfflineToken', guard('account.revokeOfflineToken'), async (req, res) => {
    res.json(await a.offlineTokens.revoke(principalOf(req), parse(S.RevokeOfflineTokenCommand, req.body).id));
  });
  r.post('/impersonate', guard('account.impersonate'), async (req, res) => {
    res.json(await a.impersonation.start(principalOf(req), parse(S.ImpersonateCommand, req.body), ctx(req)));
  });
  r.post('/assignRole', guard('account.assignRole'), async (req, res) => {
    const body = parse(S.AssignRoleCommand, req.body);
    res.json(await a.account.assignRole(principalOf(req), body.userId, body.role));
  });
}

/** GET /.well-known/jwks.json: public keys of internal tokens (any host, no tenant needed). */
export function jwksRouter(services: Services): Router {
  const r = Router();
  r.get('/.well-known/jwks.json', guard('account.jwks'), async (_req, res) => {
    res.set('cache-control', 'public, max-age=300').json(await services.auth.signingKeys.jwks());
  });
  return r;
}
