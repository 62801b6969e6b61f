import express, { Router, type Request, type Response } from 'express';
import type Provider from 'oidc-provider';
import { AppError } from '../kernel/errors.js';
import type { RealmAccounts } from '../auth/realm-accounts.js';
import type { AuditService } from '../core/audit/audit.service.js';
import { decoyHash, slowVerify } from '../kernel/secrets.js';
import { loginPage } from './login-page.js';

export interface InteractionDeps {
  provider(tenant: string): Promise<Provider>;
  accounts: Pick<RealmAccounts, 'byUsername'>;
  audit: AuditService;
  /** Told each time the form runs scrypt (metric idp_password_checks_total). */
  onPasswordCheck?: () => void;
}

/**
 * The realm's login interaction: a plain HTML form (GET) and its form post (POST .../login) that checks
 * the user's password hash and hands the account back to the provider. Plain HTTP, so tests drive it.
 */
export function interactionRouter(deps: InteractionDeps, limiter: express.RequestHandler): Router {
  const r = Router({ mergeParams: true });

  r.get('/:tenant/interaction/:uid', async (req: Request<{ tenant: string; uid: string }>, res) => {
    const provider = await deps.provider(req.params.tenant);
    const details = await interactionDetails(provider, req, res);
    if (details.prompt.name === 'consent') return grantConsent(provider, details, req, res);
    if (details.prompt.name !== 'login')
      throw new AppError('bad_request', `Unsupported interaction prompt '${details.prompt.name}'`);
    res.type('html').send(
      loginPage({
        action: `${req.baseUrl}/${req.params.tenant}/interaction/${details.uid}/login`,
        tenant: req.params.tenant,
      }),
    );
  });

  r.post(
    '/:tenant/interaction/:uid/login',
    express.urlencoded({ extended: false, limit: '16kb' }),
    limiter,
    async (req: Request<{ tenant: string; uid: string }>, res) => {
      const { tenant } = req.params;
      const provider = await deps.provider(tenant);
      const details = await interactionDetails(provider, req, res);
      const username = typeof req.body?.username === 'string' ? req.body.username.slice(0, 200) : '';
      const password = typeof req.body?.password === 'string' ? req.body.password.slice(0, 500) : '';
      const user = username ? await deps.accounts.byUsername(tenant, username) : null;
      // Unknown, inactive and password-less accounts are checked against a decoy hash: the same scrypt
      // work as a wrong password, so the answer's timing does not tell whether the account exists.
      const usable = Boolean(user && user.status === 'active' && user.passwordHash);
      const matches = await slowVerify(password, usable ? user!.passwordHash : await decoyHash(), deps.onPasswordCheck);
      const ok = usable && matches;
      if (!ok || !user) {
        await deps.audit.record(tenant, {
          action: 'signin.failure',
          outcome: 'failure',
          subjectId: user?._id.toString(),
          ip: req.ip,
          details: { method: 'idp-password' },
        });
        res
          .status(401)
          .type('html')
          .send(
            loginPage({
              action: `${req.baseUrl}/${tenant}/interaction/${details.uid}/login`,
              tenant,
              error: 'Invalid username or password',
              username,
            }),
          );
        return;
      }
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: user.idpSubject } },
        { mergeWithLastSubmission: false },
      );
    },
  );
  return r;
}

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** The service's own client is first party: consent is granted for exactly what the request asked. */
async function grantConsent(provider: Provider, details: Interaction, req: Request, res: Response): Promise<void> {
  const d = details.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  const grant =
    (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
    new provider.Grant({ accountId: details.session?.accountId, clientId: String(details.params.client_id) });
  if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
  if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {}))
    grant.addResourceScope(indicator, scopes.join(' '));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

async function interactionDetails(provider: Provider, req: Request, res: Response) {
  try {
    return await provider.interactionDetails(req, res);
  } catch (e) {
    throw new AppError('bad_request', 'The sign-in interaction has expired or is unknown; start again', { cause: e });
  }
}
