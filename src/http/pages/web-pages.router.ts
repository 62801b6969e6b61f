import { Router, type Request, type RequestHandler } from 'express';
import type { Services } from '../../app/index.js';
import { requireTenant } from '../middleware/tenant.js';
import { staticAssets } from '../reference/reference-assets.js';
import { webPagesBundle } from './web-pages.build.js';

/** Where the pages' bundled scripts and stylesheet are served (tenant hosts and the public URL alike). */
export const WEB_PAGES_ASSETS = '/web/assets';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A page shell: no inline script or style (the CSP forbids both); `config` is read by its script. */
function page(title: string, script: string, body: string, config: Record<string, unknown> = {}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${WEB_PAGES_ASSETS}/pages.css">
<link rel="icon" href="data:,">
<script type="module" src="${WEB_PAGES_ASSETS}/${script}.js"></script>
</head><body>
<main id="app" data-config="${esc(JSON.stringify(config))}">
<h1>${esc(title)}</h1>
<p id="status">Loading…</p>
${body}
<p id="error" role="alert" hidden></p>
</main>
</body></html>`;
}

const send = (res: Parameters<RequestHandler>[1], html: string) =>
  res.set('cache-control', 'no-store').type('html').send(html);

/** The realm facts the callback page's script needs to start a sign-in (issuer and authorization endpoint). */
async function signInConfig(services: Services, req: Request) {
  const tenant = req.tenant!.name;
  const meta = (await services.auth.realms.configuration(tenant)).serverMetadata();
  return {
    tenant,
    issuer: meta.issuer,
    authorizationEndpoint: meta.authorization_endpoint,
    clientId: services.auth.realms.clientId,
    scope: 'openid profile email api',
    issParameterSupported: meta.authorization_response_iss_parameter_supported === true,
  };
}

/**
 * The service's own web pages for tenants without a web app of their own (decision 330):
 * `GET /auth/callback` (the realm's redirect URI: starts and completes the code flow with PKCE, shows who
 * is signed in) and `GET /login/approve?code=` (the QR code's page: approve or refuse a device's sign-in).
 * Their scripts are files bundled on first use (web-pages.build.ts), so the strict CSP holds.
 */
export function webPagesRouter(services: Services): Router {
  const r = Router();
  let assets: RequestHandler | undefined;
  r.use(WEB_PAGES_ASSETS, async (req, res, next) => {
    try {
      assets ??= staticAssets(await webPagesBundle());
      assets(req, res, next);
    } catch (e) {
      next(e);
    }
  });
  r.get('/auth/callback', requireTenant, async (req, res, next) => {
    try {
      const config = await signInConfig(services, req);
      send(
        res,
        page(
          `Sign in to ${req.tenant!.displayName}`,
          'signin',
          `<p id="signed-in" hidden></p>\n<button id="sign-out" type="button" hidden>Sign out</button>`,
          config,
        ),
      );
    } catch (e) {
      next(e);
    }
  });
  r.get('/login/approve', requireTenant, (req, res) => {
    send(
      res,
      page(
        `Approve a sign-in to ${req.tenant!.displayName}`,
        'approve',
        `<section id="request" hidden>
<p id="device"></p>
<p id="who"></p>
<p><button id="approve" type="button" disabled>Approve</button><button id="refuse" type="button" disabled>Refuse</button></p>
</section>
<p id="outcome" role="status" hidden></p>`,
      ),
    );
  });
  return r;
}
