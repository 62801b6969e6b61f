import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { runWithContext } from '../../observability/context.js';
import { SpanKind, startSpan, traceIdOf } from '../../observability/tracing.js';
import type { Logger } from '../../observability/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import { callerIsTrusted } from '../../edge/client-address.js';
import type { TrustProxy } from '../../config/trust-proxy.js';

const ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives each request a server span and a correlation id, logs and times it. The span continues the
 * caller's W3C `traceparent` (and so its sampling decision) only when the caller is a configured proxy
 * address itself (`callerIsTrusted`); anyone else's starts a trace of its own, sampled by
 * TRACING_SAMPLE_RATIO. The correlation id is the trace id: the span's when tracing is on, else a trusted
 * caller's traceparent's, else a well-formed `x-correlation-id` of the caller, else a new one.
 */
export function requestContext(logger: Logger, metrics: Metrics, trust: TrustProxy): RequestHandler {
  const duration = metrics.histogram(
    'http_request_duration_seconds',
    'HTTP request duration',
    ['method', 'route', 'status'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  return (req, res, next) => {
    const trusted = callerIsTrusted(req, trust);
    const traceparent = trusted ? req.get('traceparent') : undefined;
    const span = startSpan(req.method, {
      kind: SpanKind.SERVER,
      parent: trusted ? { traceparent, tracestate: req.get('tracestate') } : undefined,
      attributes: { 'http.request.method': req.method, 'url.path': req.path },
    });
    const incoming = req.get('x-correlation-id');
    const correlationId =
      span.traceId ?? traceIdOf(traceparent) ?? (incoming && ID.test(incoming) ? incoming : randomUUID());
    req.correlationId = correlationId;
    res.setHeader('x-correlation-id', correlationId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      duration.labels(req.method, route, String(res.statusCode)).observe(seconds);
      if (span.span) {
        span.span.updateName(`${req.method} ${route}`);
        span.span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
        if (req.tenant?.name) span.span.setAttribute('tenant', req.tenant.name);
      }
      span.end(res.statusCode >= 500 ? { code: String(res.statusCode) } : undefined);
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
    span.run(() => runWithContext({ correlationId, component: 'http' }, () => next()));
  };
}
