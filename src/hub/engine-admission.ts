import { ServerResponse, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { toAppError, toProblem, type AppError } from '../kernel/errors.js';
import type { Logger } from '../observability/logger.js';

/** Counts one new engine.io session against its client address's budget; throws `rate_limited` over it. */
export type AdmitSession = (req: IncomingMessage) => Promise<void>;

/** An engine.io request after its query is parsed (engine.io sets `_query` before the middlewares run). */
type EngineRequest = IncomingMessage & { _query?: Record<string, string | undefined> };

/**
 * engine.io middleware (`io.engine.use`): every request that would open a new engine.io session (no
 * `sid`: the polling handshake GET or a websocket upgrade) is counted against the client address's
 * budget before engine.io allocates the session. Requests of an open session are not counted (the
 * session already paid). Over the budget the request is answered 429 `rate_limited` with a problem
 * document and Retry-After, on polling and on a websocket upgrade alike, and no session is made.
 */
export function engineAdmission(admit: AdmitSession, logger: Logger) {
  return (req: IncomingMessage, res: ServerResponse | { end(): void }, next: (err?: Error) => void): void => {
    if ((req as EngineRequest)._query?.sid) return next();
    admit(req).then(
      () => next(),
      (e: unknown) => {
        const err = toAppError(e);
        if (err.code === 'internal') logger.error({ component: 'hub', err: e }, 'engine.io session admission failed');
        refuse(req, res, err);
      },
    );
  };
}

/** Answers the refusal on the request's own connection (a websocket upgrade has no ServerResponse). */
function refuse(req: IncomingMessage, res: ServerResponse | { end(): void }, err: AppError): void {
  const body = JSON.stringify(toProblem(err));
  const headers: Record<string, string> = {
    'content-type': 'application/problem+json',
    'content-length': String(Buffer.byteLength(body)),
    ...(err.retryAfter ? { 'retry-after': String(err.retryAfter) } : {}),
  };
  if (res instanceof ServerResponse) {
    if (res.headersSent) return void res.end();
    res.writeHead(err.status, headers);
    res.end(body);
    return;
  }
  const socket: Duplex = req.socket;
  if (socket.writable) {
    const head = Object.entries({ ...headers, connection: 'close' })
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n');
    socket.write(`HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}\r\n${head}\r\n\r\n${body}`);
  }
  socket.destroy();
}
