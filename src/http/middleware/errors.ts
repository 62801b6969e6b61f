import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, toAppError, toProblem } from '../../kernel/errors.js';
import type { Logger } from '../../observability/logger.js';

export const notFound: RequestHandler = (req) => {
  throw new AppError('route_not_found', `No route for ${req.method} ${req.path}`);
};

/** The one place REST errors become RFC 9457 problem documents. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const e = bodyParserError(err) ?? toAppError(err);
    if (e.code === 'internal' || e.status >= 500)
      logger.error({ component: 'http', err, path: req.path }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (e.retryAfter) res.setHeader('Retry-After', String(Math.ceil(e.retryAfter)));
    res
      .status(e.status)
      .type('application/problem+json')
      .send(JSON.stringify(toProblem(e, req.correlationId, req.originalUrl.split('?')[0])));
  };
}

function bodyParserError(err: { type?: string; status?: number; expose?: boolean }): AppError | undefined {
  // The router rejects a path parameter that is not valid percent-encoded UTF-8 (`%c0%ae`) with a URIError.
  if (err instanceof URIError && err.status === 400)
    return new AppError('bad_request', 'The request path is not valid percent-encoded UTF-8');
  switch (err?.type) {
    case 'entity.parse.failed':
      return new AppError('malformed_json', 'The request body is not valid JSON');
    case 'entity.too.large':
      return new AppError('payload_too_large', 'The request body is too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'Unsupported body encoding');
    default:
      return undefined;
  }
}
