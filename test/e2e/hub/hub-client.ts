import { io, type Socket } from 'socket.io-client';
import type { AckResult, ClientToServerEvents, ServerToClientEvents } from '../../../src/hub/hub.events.js';
import { HUB_PATH } from '../../../src/hub/hub.server.js';

export type HubClient = Socket<ServerToClientEvents, ClientToServerEvents>;

export interface ConnectOptions {
  token?: string;
  /** Send the token as `?access_token=` instead of `auth.token`. */
  viaQuery?: boolean;
  host?: string;
}

/** A socket.io client on the websocket transport, with the tenant's host in the Host header. */
export function hubClient(url: string, tenant: string, opts: ConnectOptions = {}): HubClient {
  const port = new URL(url).port;
  return io(url, {
    path: HUB_PATH,
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    extraHeaders: { host: opts.host ?? `${tenant}.localhost:${port}` },
    ...(opts.token && !opts.viaQuery ? { auth: { token: opts.token } } : {}),
    ...(opts.token && opts.viaQuery ? { query: { access_token: opts.token } } : {}),
  });
}

/** Connects and resolves once connected, or rejects with the handshake refusal (err.data.code). */
export async function connect(url: string, tenant: string, opts: ConnectOptions = {}): Promise<HubClient> {
  const socket = hubClient(url, tenant, opts);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (err) => {
      socket.close();
      reject(err);
    });
  });
  return socket;
}

/** Calls a hub method and resolves with its acknowledgement. */
export function call<T = any>(socket: HubClient, method: keyof ClientToServerEvents, ...args: unknown[]): Promise<AckResult<T>> {
  return (socket.timeout(15_000) as unknown as { emitWithAck(ev: string, ...a: unknown[]): Promise<AckResult<T>> }).emitWithAck(method, ...args);
}

/** Calls a method that must succeed and returns its data. */
export async function must<T = any>(socket: HubClient, method: keyof ClientToServerEvents, ...args: unknown[]): Promise<T> {
  const r = await call<T>(socket, method, ...args);
  if (!r.ok) throw new Error(`${method} failed: ${r.error.code} ${r.error.message}`);
  return r.data;
}

/**
 * Records every push a socket receives so a test can await one that may already have arrived.
 * `next(event, match)` resolves with the first unseen matching push.
 */
export function recorder(socket: HubClient) {
  const seen: { event: string; payload: any }[] = [];
  const waiters: { event: string; match: (p: any) => boolean; resolve: (p: any) => void; from: number }[] = [];
  socket.onAny((event: string, payload: any) => {
    seen.push({ event, payload });
    for (const w of [...waiters]) {
      if (w.event === event && w.match(payload)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(payload);
      }
    }
  });
  return {
    seen,
    of: (event: string) => seen.filter((s) => s.event === event).map((s) => s.payload),
    next(event: string, match: (p: any) => boolean = () => true): Promise<any> {
      const hit = seen.find((s) => s.event === event && match(s.payload));
      if (hit) return Promise.resolve(hit.payload);
      return new Promise((resolve) => waiters.push({ event, match, resolve, from: seen.length }));
    },
  };
}
