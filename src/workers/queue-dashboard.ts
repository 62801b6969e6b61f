import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { constantTimeEqual } from '../kernel/secrets.js';
import { QUEUE_NAMES } from '../contracts/job-definitions.js';
import type { JobQueues } from '../data/job-queues.js';

/** Where the dashboard lives on the metrics listener. */
export const QUEUE_DASHBOARD_PATH = '/queues';

/**
 * The page's policy: everything from the listener itself. bull-board's page holds inline `style`
 * attributes and a `<style>` in its loading placeholder, and its React code sets styles at run time,
 * so styles may be inline; no inline script runs (its configuration is a JSON data block), nothing is
 * fetched, framed or posted elsewhere.
 */
const DASHBOARD_CSP = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  strictTransportSecurity: false,
  xFrameOptions: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  crossOriginEmbedderPolicy: false,
});

/** Stylesheets and fonts the page would fetch from other hosts: left out, the page uses its fallback fonts. */
const REMOTE_STYLESHEET = /<link\b[^>]*\bhref="https?:\/\/[^"]*"[^>]*>\s*/gi;

/**
 * bull-board's page template without what it loads from other hosts (its web fonts come from a public
 * font CDN: a request to a third party from the operator's browser, and a page that breaks offline).
 * Written once per template text beside the system's temporary files; the template's other contents
 * (hashed asset names, placeholders) are the installed version's own.
 */
export function localOnlyViews(): string {
  const ui = path.dirname(createRequire(import.meta.url).resolve('@bull-board/ui/package.json'));
  const template = readFileSync(path.join(ui, 'dist', 'index.ejs'), 'utf8').replace(REMOTE_STYLESHEET, '');
  const dir = path.join(
    tmpdir(),
    `consult-queue-dashboard-${createHash('sha256').update(template).digest('hex').slice(0, 16)}`,
  );
  if (!existsSync(path.join(dir, 'index.ejs'))) {
    mkdirSync(dir, { recursive: true });
    const tmp = path.join(dir, `index.ejs.${process.pid}`);
    writeFileSync(tmp, template);
    renameSync(tmp, path.join(dir, 'index.ejs'));
  }
  return dir;
}

/**
 * The operator's queue dashboard (decision 841): the BullMQ dashboard over every queue, served on the
 * metrics listener (never the public port or a tenant host) to holders of `QUEUE_DASHBOARD_TOKEN`, sent
 * as the password of HTTP Basic authentication (a browser asks for it) or as a bearer token. Failed jobs
 * are retried from it; the queues are the whole deployment's, every tenant's jobs together.
 */
export function queueDashboard(queues: JobQueues, token: string): (req: IncomingMessage, res: ServerResponse) => void {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: QUEUE_NAMES.map((q) => new BullMQAdapter(queues.queue(q), { allowRetries: true })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Consult queues' } },
  });
  serverAdapter.setViewsPath(localOnlyViews());
  const app = express();
  app.disable('x-powered-by');
  app.use(QUEUE_DASHBOARD_PATH, DASHBOARD_CSP, operatorOnly(token), serverAdapter.getRouter());
  return app;
}

function operatorOnly(token: string): RequestHandler {
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const basic = /^Basic (.+)$/i.exec(header);
    const password = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').slice(1).join(':') : '';
    if (constantTimeEqual(header, `Bearer ${token}`) || (basic && constantTimeEqual(password, token))) return next();
    res
      .set('www-authenticate', 'Basic realm="queues", charset="UTF-8"')
      .status(401)
      .type('text/plain')
      .send('unauthorized\n');
  };
}
