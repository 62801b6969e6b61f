import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { runWithContext } from '../../observability/context.js';
import type { Logger } from '../../observability/logger.js';
import type { Metrics } from '../../observability/metrics.js';

const ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives each request a correlation id (accepted from the caller when well-formed), logs and times it. */
export function requestContext(logger: Logger, metrics: Metrics): RequestHandler {
  const duration = metrics.histogram(
    'http_request_duration_seconds',
    'HTTP request duration',
    ['method', 'route', 'status'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  return (req, res, next) => {
    const incoming = req.get('x-correlation-id');
    const correlationId = incoming && ID.test(incoming) ? incoming : randomUUID();
    req.correlationId = correlationId;
    res.setHeader('x-correlation-id', correlationId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      duration.labels(req.method, route, String(res.statusCode)).observe(seconds);
      const level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug';
      logger[level](
        {
          component: 'http',
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
          tenant: req.tenant?.name,
        },
        'request',
      );
    });
    runWithContext({ correlationId, component: 'http' }, () => next());
  };
}
