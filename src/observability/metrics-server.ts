import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';
import { constantTimeEqual } from '../kernel/secrets.js';

export interface MetricsServer {
  /** Base URL of the listener (ephemeral port resolved). */
  url: string;
  close(): Promise<void>;
}

/**
 * Prometheus' scrape endpoint on a listener of its own (METRICS_HOST:METRICS_PORT, loopback by default),
 * never on the public port or a tenant host: the figures name internals (queues, nodes, methods,
 * error rates). With a token configured every scrape must send `Authorization: Bearer <token>`.
 */
export async function startMetricsServer(
  metrics: Metrics,
  opts: { host: string; port: number; token?: string },
  /** Operator pages on this listener (the queue dashboard), each under its path prefix with its own guard. */
  pages: { prefix: string; handle(req: IncomingMessage, res: ServerResponse): void }[] = [],
): Promise<MetricsServer> {
  const server: Server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const page = pages.find((p) => path === p.prefix || path.startsWith(`${p.prefix}/`));
    if (page) return page.handle(req, res);
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (opts.token && !constantTimeEqual(req.headers.authorization ?? '', `Bearer ${opts.token}`)) {
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="metrics"' })
        .end('unauthorized\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
