import { Router, type RequestHandler } from 'express';
import { explorerCsp } from '../middleware/security-headers.js';
import { requireTenant } from '../middleware/tenant.js';
import { explorerBundle } from './graphiql.build.js';
import { staticAssets } from './reference-assets.js';

/** GraphiQL's page: no inline script; the bundle's module script renders the explorer. */
export const EXPLORER_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>GraphQL explorer</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/graphql/assets/graphiql.css">
<link rel="icon" href="data:,">
</head><body>
<div id="graphiql">Loading the explorer…</div>
<script type="module" src="/graphql/assets/graphiql.js"></script>
</body></html>`;

/** A browser navigating to /graphql (GET preferring HTML, no query): API clients never get the page. */
export function wantsExplorer(req: Parameters<RequestHandler>[0]): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (req.query.query !== undefined) return false;
  return req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
}

/**
 * GraphiQL at /graphql for browsers (decision 711): the page on tenant hosts, its bundle under
 * /graphql/assets (built from the installed packages on first use, see graphiql.build.ts). Anything
 * else falls through to Apollo, whose CSRF prevention still applies to every API request.
 */
export function explorerRouter(): Router {
  const r = Router();
  let serve: RequestHandler | undefined;
  r.use('/assets', async (req, res, next) => {
    try {
      serve ??= staticAssets(await explorerBundle());
      serve(req, res, next);
    } catch (e) {
      next(e);
    }
  });
  r.get(
    '/',
    (req, res, next) => (wantsExplorer(req) ? next() : next('router')),
    requireTenant,
    explorerCsp(),
    (_req, res) => {
      res.type('html').send(EXPLORER_PAGE);
    },
  );
  return r;
}
