import { Router, type NextFunction, type Request, type Response } from 'express';
import type { RoleStarter } from '../app/index.js';
import { DEMO_USERS, DEMO_PASSWORD } from '../data/seed/demo.seed.js';
import { rateLimit, byIp, byBodyField } from '../edge/rate-limit.js';
import { slowHash } from '../kernel/secrets.js';
import { IdpRealms } from './idp-realms.js';
import { interactionRouter } from './interaction.router.js';
import { setPasswordRouter } from './set-password.router.js';

/**
 * The embedded identity provider role: one oidc-provider per tenant realm under /realms/{tenant},
 * mounted before the tenant resolver. Unknown tenants get a 404 problem. In external mode the role
 * mounts nothing (Keycloak or another provider serves the realms).
 */
export const startIdp: RoleStarter = async ({ infra, services, mount }) => {
  const log = infra.logger.child({ component: 'idp' });
  if (infra.config.auth.oidc.mode === 'external') {
    log.info('OIDC_MODE=external: the embedded identity provider is not mounted');
    return { stop: async () => undefined };
  }
  const realms = new IdpRealms({
    config: infra.config,
    storage: services.auth.realmStorage,
    secrets: services.auth.idpSecrets,
    accounts: services.auth.realmAccounts,
    redirectUris: (t) => services.webApp.registeredRedirectUris(t),
    onRealmSessionEnded: async (tenant, subject, sid, reason) => {
      const user = await services.auth.realmAccounts.bySubject(tenant, subject);
      if (user) await services.auth.sessions.endRealmSession(tenant, user._id.toString(), sid, reason);
    },
    onError: (err) => log.error({ err }, 'ending the service sessions of an ended realm session failed'),
  });
  const provider = async (tenant: string) => {
    await services.tenants.require(tenant);
    return realms.get(tenant);
  };
  const l = infra.config.limits;
  const limiter = rateLimit({ redis: infra.redis, keyFor: infra.keys.rateLimit }, [
    { bucket: 'idp-ip', limit: l.signinPerIp, windowSeconds: l.windowSeconds, key: byIp },
    // Per tenant and username: the realm pages run before the tenant resolver, so the tenant is the path's.
    {
      bucket: 'idp-account',
      limit: l.signinPerAccount,
      windowSeconds: l.windowSeconds,
      key: byBodyField('username', (req) => (typeof req.params.tenant === 'string' ? req.params.tenant : undefined)),
    },
  ]);
  const router = Router();
  router.use(originFromIssuer(infra.config.auth.oidc.issuerTemplate));
  const passwordChecks = infra.metrics.counter(
    'idp_password_checks_total',
    'scrypt password checks of the embedded realm sign-in form (unknown accounts included: they are checked against a decoy hash)',
  );
  router.use(
    setPasswordRouter(
      { accountSetup: services.auth.accountSetup, requireTenant: (t) => services.tenants.require(t) },
      limiter,
    ),
  );
  router.use(
    interactionRouter(
      {
        provider,
        accounts: services.auth.realmAccounts,
        audit: services.auth.audit,
        onPasswordCheck: () => passwordChecks.inc(),
      },
      limiter,
    ),
  );
  const callbacks = new WeakMap<object, ReturnType<Awaited<ReturnType<typeof provider>>['callback']>>();
  router.use('/:tenant', async (req, res) => {
    const p = await provider(req.params.tenant);
    if (!callbacks.has(p)) callbacks.set(p, p.callback());
    await callbacks.get(p)!(req, res);
  });
  mount.preTenant('/realms', router);
  if (infra.config.seedDemo)
    await services.auth.realmAccounts.seedPasswords(
      'demo',
      DEMO_USERS.map((u) => u.username),
      () => slowHash(DEMO_PASSWORD),
    );
  log.info({ issuerTemplate: infra.config.auth.oidc.issuerTemplate }, 'embedded identity provider mounted');
  return { stop: async () => undefined };
};

/**
 * oidc-provider (koa) builds the URLs of its discovery document, redirects and forms from the request's
 * origin: Host, or X-Forwarded-Host/-Proto when `proxy` is on. The provider keeps `proxy` on and these
 * headers are rewritten here: host and scheme from the realm's configured issuer (OIDC_ISSUER_TEMPLATE,
 * by default PUBLIC_URL), whatever Host or forwarded headers the request carried; the client address
 * from Express's TRUST_PROXY view.
 */
export function originFromIssuer(issuerTemplate: string) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    req.headers['x-forwarded-for'] = req.ip ?? req.socket.remoteAddress ?? '';
    const tenant = /^\/([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\/|$)/.exec(req.path)?.[1];
    if (!tenant) {
      // No realm of ours: the tenant lookup answers 404; the provider is never reached.
      delete req.headers['x-forwarded-host'];
      delete req.headers['x-forwarded-proto'];
      return next();
    }
    const issuer = new URL(issuerTemplate.replace('{tenant}', tenant));
    req.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
    req.headers['x-forwarded-host'] = issuer.host;
    next();
  };
}
