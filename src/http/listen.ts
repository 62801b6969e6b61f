import type { Server } from 'node:http';
import type { Config } from '../config/config.js';

/**
 * The public port's listener. Its accept queue is `HTTP_LISTEN_BACKLOG` (decision 1145): a killed node's
 * clients all come back within a second or two, and at Node's default of 511 the kernel dropped the
 * connections beyond it, each retried 1, 3 or 7 s later by its client's TCP.
 */
export function listenPublic(
  server: Server,
  http: Pick<Config['http'], 'host' | 'port' | 'listenBacklog'>,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: http.port, host: http.host, backlog: http.listenBacklog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
