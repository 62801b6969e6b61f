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
export function engineAdmission(
  admit: AdmitSession,
  logger: Logger,
  /** Told of each request that opens a session, before its count (prepaidHandshakes' `start`). */
  onSession?: (req: IncomingMessage) => void,
) {
  return (req: IncomingMessage, res: ServerResponse | { end(): void }, next: (err?: Error) => void): void => {
    if ((req as EngineRequest)._query?.sid) return next();
    onSession?.(req);
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

/**
 * The Socket.IO handshake's count against its address (RATE_LIMIT_PER_IP), started when the engine.io
 * session that carries it opens, beside the session's own count: the handshake then finds its answer
 * there instead of asking Redis once more while the client waits. Its outcome is kept, not acted on: a
 * refusal is still the handshake's coded `connect_error`. A session's later handshakes (another
 * namespace, a second CONNECT) are counted when they come. Keyed by the session's opening request, which
 * is the request Socket.IO gives the socket (`socket.request`).
 */
export function prepaidHandshakes(admitHandshake: AdmitSession): {
  start(req: IncomingMessage): void;
  admit(req: IncomingMessage): Promise<void>;
} {
  const paid = new WeakMap<IncomingMessage, Promise<void>>();
  return {
    start(req) {
      const counted = admitHandshake(req);
      // Awaited by the handshake; a session refused before its handshake leaves it unread.
      counted.catch(() => undefined);
      paid.set(req, counted);
    },
    admit(req) {
      const counted = paid.get(req);
      if (!counted) return admitHandshake(req);
      paid.delete(req);
      return counted;
    },
  };
}
