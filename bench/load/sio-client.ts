import { io, type Socket } from 'socket.io-client';

export interface SioTarget {
  url: string;
  path: string;
  /** Host header (tenant) sent on the websocket upgrade. */
  host?: string;
  token?: string;
}

/** Opens one websocket-only Socket.IO client (no reconnection: a benchmark wants to see failures). */
export function connectSio(t: SioTarget, timeoutMs = 15_000): Promise<Socket> {
  const socket = io(t.url, {
    path: t.path,
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    timeout: timeoutMs,
    auth: t.token ? { token: t.token } : {},
    extraHeaders: t.host ? { host: t.host } : undefined,
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (e) => {
      socket.close();
      reject(new Error(`connect to ${t.url}: ${e.message}`));
    });
  });
}

/** Connects `n` clients with at most `parallel` handshakes in flight. */
export async function connectMany(n: number, target: (i: number) => SioTarget, parallel = 50): Promise<Socket[]> {
  const out: Socket[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await connectSio(target(i));
      }
    }),
  );
  return out;
}
