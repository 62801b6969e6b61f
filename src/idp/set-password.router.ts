import express, { Router, type Request, type Response } from 'express';
import { isAppError } from '../kernel/errors.js';
import { esc } from './login-page.js';
import {
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  type AccountSetupService,
} from '../core/identity/account-setup.service.js';

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>${esc(title)}</h1>
${body}
</main></body></html>`;
}

/** The set-password form of a one-time link (no scripts: any client, browser or test, can post it). */
export function setPasswordPage(p: {
  action: string;
  tenant: string;
  token: string;
  username: string;
  error?: string;
}): string {
  return page(
    `Set your password - ${p.tenant}`,
    `<p>Account: <strong data-username>${esc(p.username)}</strong></p>
${p.error ? `<p role="alert">${esc(p.error)}</p>` : ''}
<form method="post" action="${esc(p.action)}">
<input type="hidden" name="token" value="${esc(p.token)}">
<input type="text" name="username" autocomplete="username" value="${esc(p.username)}" hidden readonly>
<label>New password (${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters) <input name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" required></label>
<label>Repeat it <input name="confirm" type="password" autocomplete="new-password" required></label>
<button type="submit">Set password</button>
</form>`,
  );
}

/**
 * `/realms/{tenant}/set-password?token=`: the page of a one-time set-password link (docs/onboarding.md).
 * GET shows the form while the link is open (410 otherwise); POST sets the password once.
 */
export function setPasswordRouter(
  deps: { accountSetup: AccountSetupService; requireTenant(name: string): Promise<unknown> },
  limiter: express.RequestHandler,
): Router {
  const r = Router({ mergeParams: true });
  const noStore = (res: Response) => res.set('cache-control', 'no-store');

  r.get('/:tenant/set-password', limiter, async (req: Request<{ tenant: string }>, res) => {
    noStore(res);
    const token = typeof req.query.token === 'string' ? req.query.token.slice(0, 200) : '';
    const { tenant } = req.params;
    try {
      await deps.requireTenant(tenant);
      const account = await deps.accountSetup.linkAccount(tenant, token);
      res.type('html').send(
        setPasswordPage({
          action: `${req.baseUrl}/${tenant}/set-password`,
          tenant,
          token,
          username: account.username,
        }),
      );
    } catch (e) {
      if (!isAppError(e) || (e.code !== 'setup_link_invalid' && e.code !== 'tenant_not_found')) throw e;
      res
        .status(410)
        .type('html')
        .send(page('Link not valid', `<p role="alert">${esc(e.message)}</p>`));
    }
  });

  r.post(
    '/:tenant/set-password',
    express.urlencoded({ extended: false, limit: '16kb' }),
    limiter,
    async (req: Request<{ tenant: string }>, res) => {
      noStore(res);
      const { tenant } = req.params;
      const field = (name: string, max: number) =>
        typeof req.body?.[name] === 'string' ? (req.body[name] as string).slice(0, max) : '';
      const token = field('token', 200);
      const password = field('password', PASSWORD_MAX_LENGTH + 1);
      const again = (username: string, error: string) =>
        res
          .status(422)
          .type('html')
          .send(setPasswordPage({ action: `${req.baseUrl}/${tenant}/set-password`, tenant, token, username, error }));
      try {
        await deps.requireTenant(tenant);
        if (password !== field('confirm', PASSWORD_MAX_LENGTH + 1)) {
          const account = await deps.accountSetup.linkAccount(tenant, token);
          return void again(account.username, 'The two passwords differ');
        }
        const { username } = await deps.accountSetup.setPassword(tenant, token, password, req.ip);
        res
          .type('html')
          .send(
            page(
              'Password set',
              `<p role="status">The password of <strong data-username>${esc(username)}</strong> is set. Go back to your application and sign in.</p>`,
            ),
          );
      } catch (e) {
        if (isAppError(e) && e.code === 'password_policy_violation') {
          const account = await deps.accountSetup.linkAccount(tenant, token);
          return void again(account.username, e.message);
        }
        if (isAppError(e) && (e.code === 'setup_link_invalid' || e.code === 'tenant_not_found')) {
          return void res
            .status(410)
            .type('html')
            .send(page('Link not valid', `<p role="alert">${esc(e.message)}</p>`));
        }
        throw e;
      }
    },
  );
  return r;
}
