import http from 'node:http';
import { io, type Socket } from 'socket.io-client';
import type { AckResult, ClientToServerEvents, ServerToClientEvents } from '../../src/hub/hub.events.js';
import { HUB_PATH } from '../../src/hub/hub.server.js';

export type HubClient = Socket<ServerToClientEvents, ClientToServerEvents>;

/**
 * How a test client reaches the hub: `websocket` only (what the mobile apps configure), socket.io-client's
 * `default` (HTTP long-polling first, then the upgrade to websocket: what an unconfigured client does) or
 * `polling` only (a client behind a proxy that refuses upgrades).
 */
export type HubTransport = 'websocket' | 'default' | 'polling';
export const HUB_TRANSPORTS: readonly HubTransport[] = ['websocket', 'default', 'polling'];

const TRANSPORTS: Record<HubTransport, ('websocket' | 'polling')[] | undefined> = {
  websocket: ['websocket'],
  default: undefined,
  polling: ['polling'],
};

export interface ConnectOptions {
  /** Transports of the client (default: websocket only). */
  transport?: HubTransport;
  token?: string;
  /** Send the token as `?access_token=` instead of `auth.token`. */
  viaQuery?: boolean;
  /** Host name to connect to instead of `{tenant}.localhost` (the port is the node's). */
  host?: string;
  /** Reconnect as socket.io-client does by default (tests turn it off unless they test it). */
  reconnect?: boolean;
}

/**
 * Resolves every name to the loopback address, as browsers resolve `*.localhost`: the test clients
 * connect to `{tenant}.localhost:{port}` so every request (polling ones included) carries the tenant's
 * Host header. socket.io-client in Node does not send an `extraHeaders` Host on the polling transport
 * (its XMLHttpRequest sets Host from the URL after the extra headers), only on the websocket one.
 */
export const loopbackAgent = new http.Agent({
  lookup: ((_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) =>
    opts?.all
      ? cb(null, [{ address: '127.0.0.1', family: 4 }])
      : cb(null, '127.0.0.1', 4)) as unknown as http.AgentOptions['lookup'],
});

/** A socket.io client of the tenant's host (`{tenant}.localhost`, or `opts.host`) on the port of `url`. */
export function hubClient(url: string, tenant: string, opts: ConnectOptions = {}): HubClient {
  const port = new URL(url).port;
  const transports = TRANSPORTS[opts.transport ?? 'websocket'];
  return io(`http://${opts.host ?? `${tenant}.localhost`}:${port}`, {
    path: HUB_PATH,
    ...(transports ? { transports } : {}),
    reconnection: opts.reconnect ?? false,
    forceNew: true,
    agent: loopbackAgent as unknown as string,
    ...(opts.token && !opts.viaQuery ? { auth: { token: opts.token } } : {}),
    ...(opts.token && opts.viaQuery ? { query: { access_token: opts.token } } : {}),
  });
}

/** How long `connect` waits for the hub's answer to the connection (socket.io-client's own open timeout). */
export const CONNECT_TIMEOUT_MS = 20_000;

/**
 * Connects and resolves once connected, or rejects with the handshake refusal (err.data.code). It also
 * rejects, with code 'disconnected', when the transport closes before the hub answered the connection
 * (the node died or stopped between the transport's open and the namespace's answer: socket.io-client
 * then emits only `disconnect`, never `connect_error`, and with reconnection off nothing follows), and
 * with code 'connect_timeout' after `timeoutMs` without an answer. A connect never waits forever.
 */
export async function connect(
  url: string,
  tenant: string,
  opts: ConnectOptions & { timeoutMs?: number } = {},
): Promise<HubClient> {
  const socket = hubClient(url, tenant, opts);
  // Every listener goes once the first connection settles: a `connect_error` listener left behind would
  // close the client at a later reconnection's first failed attempt, ending socket.io's own retries.
  await new Promise<void>((resolve, reject) => {
    const settle = () => {
      clearTimeout(timer);
      socket.off('connect', onConnect);
      socket.off('connect_error', onError);
      socket.off('disconnect', onClosed);
    };
    const onConnect = () => {
      settle();
      resolve();
    };
    const onError = (err: Error) => {
      settle();
      socket.close();
      reject(err);
    };
    const fail = (code: string, message: string) => onError(Object.assign(new Error(message), { code }));
    // With reconnection on, socket.io-client retries after a close by itself: only its failure counts.
    const onClosed = (reason: string) => {
      if (!opts.reconnect) fail('disconnected', `the transport closed before the hub answered (${reason})`);
    };
    const timeoutMs = opts.timeoutMs ?? CONNECT_TIMEOUT_MS;
    const timer = setTimeout(() => fail('connect_timeout', `no answer from the hub within ${timeoutMs} ms`), timeoutMs);
    socket.on('connect', onConnect);
    socket.on('connect_error', onError);
    socket.on('disconnect', onClosed);
  });
  return socket;
}

/** `connect` bound to one transport, for test files that run their cases once per transport. */
export function connectVia(transport: HubTransport) {
  return (url: string, tenant: string, opts: ConnectOptions = {}) => connect(url, tenant, { transport, ...opts });
}

/** The name of the transport a connected client currently uses ('polling' or 'websocket'). */
export function transportOf(socket: HubClient): string {
  return socket.io.engine.transport.name;
}

/** Resolves once a default-transport client finished its upgrade to websocket (rejects if the probe failed). */
export function upgraded(socket: HubClient): Promise<void> {
  const engine = socket.io.engine;
  if (engine.transport.name === 'websocket') return Promise.resolve();
  return new Promise((resolve, reject) => {
    engine.once('upgrade', () => resolve());
    engine.once('upgradeError', (err: Error) => reject(err));
  });
}

/** Calls a hub method and resolves with its acknowledgement. */
export function call<T = any>(
  socket: HubClient,
  method: keyof ClientToServerEvents,
  ...args: unknown[]
): Promise<AckResult<T>> {
  return (
    socket.timeout(15_000) as unknown as { emitWithAck(ev: string, ...a: unknown[]): Promise<AckResult<T>> }
  ).emitWithAck(method, ...args);
}

/** Calls a method that must succeed and returns its data. */
export async function must<T = any>(
  socket: HubClient,
  method: keyof ClientToServerEvents,
  ...args: unknown[]
): Promise<T> {
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
