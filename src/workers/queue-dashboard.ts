import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { constantTimeEqual } from '../auth/secrets.js';
import { QUEUE_NAMES } from '../core/job-definitions.js';
import type { JobQueues } from './job-queues.js';

/** Where the dashboard lives on the metrics listener. */
export const QUEUE_DASHBOARD_PATH = '/queues';

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
  const app = express();
  app.disable('x-powered-by');
  app.use(QUEUE_DASHBOARD_PATH, operatorOnly(token), serverAdapter.getRouter());
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
