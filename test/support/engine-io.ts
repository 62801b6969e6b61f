import net from 'node:net';
import { HUB_PATH } from '../../src/hub/hub.server.js';
import { request, type HttpResult } from './http.js';

/** Separator of packets in one engine.io v4 long-polling payload. */
export const RECORD_SEPARATOR = '\x1e';

/** The query of a long-polling request of the hub (engine.io protocol 4), with `sid` once opened. */
export function pollingPath(sid?: string, extra = ''): string {
  return `${HUB_PATH}/?EIO=4&transport=polling${sid ? `&sid=${encodeURIComponent(sid)}` : ''}${extra}`;
}

/** The packets of a long-polling response body. */
export function packets(body: string): string[] {
  return body.split(RECORD_SEPARATOR);
}

export interface PollingSession {
  sid: string;
  /** One long-poll GET: resolves with the packets the server had (or sent) for this session. */
  get(): Promise<string[]>;
  /** One POST of packets (joined with the record separator). */
  post(...packets: string[]): Promise<HttpResult>;
}

/**
 * A long-polling conversation the way curl would hold it: plain HTTP requests with the tenant's Host
 * header, no Socket.IO client. Opens the engine.io session (the handshake GET) and returns its sid.
 */
export async function openPolling(url: string, tenant: string): Promise<PollingSession> {
  const open = await request(url, 'GET', pollingPath(), { tenant });
  if (open.status !== 200 || !open.text.startsWith('0{'))
    throw new Error(`polling handshake answered ${open.status}: ${open.text.slice(0, 200)}`);
  const { sid } = JSON.parse(open.text.slice(1)) as { sid: string };
  return {
    sid,
    async get() {
      const r = await request(url, 'GET', pollingPath(sid), { tenant });
      if (r.status !== 200) throw new Error(`long-poll GET answered ${r.status}: ${r.text.slice(0, 200)}`);
      return packets(r.text);
    },
    post: (...p: string[]) =>
      request(url, 'POST', pollingPath(sid), {
        tenant,
        rawBody: p.join(RECORD_SEPARATOR),
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
      }),
  };
}

/**
 * Reads long-poll GETs until a packet matching `match` arrives (engine.io pings and other packets are
 * skipped; a ping is answered with a pong so the session stays open). Bounded by `maxPolls`.
 */
export async function pollUntil(
  session: PollingSession,
  match: (packet: string) => boolean,
  maxPolls = 10,
): Promise<string> {
  for (let i = 0; i < maxPolls; i++) {
    for (const p of await session.get()) {
      if (match(p)) return p;
      if (p === '2') await session.post('3');
    }
  }
  throw new Error(`no matching packet within ${maxPolls} long polls`);
}

/** A deterministic pseudo-random generator (mulberry32): hostile inputs are the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface RawExchange {
  /** Everything the server sent before it closed the connection or the read window ended. */
  received: Buffer;
  /** The server closed (or reset) the connection. */
  closed: boolean;
}

/**
 * Writes raw bytes on a fresh TCP connection (no HTTP client to tidy them up), optionally half-closes
 * it, and collects the answer until the server closes the connection, `until` matches what arrived, or
 * `readMs` passes (a bound, so a server that keeps a bad connection open cannot hang the test).
 */
export function rawExchange(
  port: number,
  chunks: (Buffer | string)[],
  opts: {
    halfClose?: boolean;
    destroyAfterWrite?: boolean;
    readMs?: number;
    until?: (received: Buffer) => boolean;
  } = {},
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const parts: Buffer[] = [];
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(parts), closed });
    };
    const timer = setTimeout(() => done(false), opts.readMs ?? 3000);
    socket.on('data', (d) => {
      parts.push(d);
      if (opts.until?.(Buffer.concat(parts))) done(false);
    });
    socket.on('error', () => done(true));
    socket.on('close', () => done(true));
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
      if (opts.destroyAfterWrite) return done(false);
      if (opts.halfClose) socket.end();
    });
  });
}

/** The HTTP status of a raw answer (0 when none came). */
export function statusOf(received: Buffer): number {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(received.toString('latin1'));
  return m ? Number(m[1]) : 0;
}

/** A raw HTTP/1.1 request as text (Host of the tenant, explicit Content-Length unless given). */
export function rawRequest(
  method: string,
  path: string,
  host: string,
  body: Buffer | string = '',
  headers: Record<string, string> = {},
): Buffer {
  const b = Buffer.from(body);
  const all = {
    host,
    connection: 'close',
    ...(method === 'GET' && !b.length ? {} : { 'content-length': String(b.length) }),
    ...headers,
  };
  const head = `${method} ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), b]);
}

/** A websocket upgrade request for the hub (a valid Sec-WebSocket-Key unless `key` says otherwise). */
export function upgradeRequest(host: string, sid?: string, key = 'dGhlIHNhbXBsZSBub25jZQ=='): string {
  return (
    `GET ${HUB_PATH}/?EIO=4&transport=websocket${sid ? `&sid=${encodeURIComponent(sid)}` : ''} HTTP/1.1\r\nhost: ${host}\r\n` +
    `upgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-key: ${key}\r\nsec-websocket-version: 13\r\n\r\n`
  );
}

/**
 * One websocket frame as a client sends it (masked). `opcode` 1 text, 2 binary, 8 close, 9 ping;
 * `rsv` sets reserved bits and `unmasked` omits the mask, both protocol violations.
 */
export function wsFrame(
  payload: Buffer | string,
  opts: { opcode?: number; fin?: boolean; rsv?: number; unmasked?: boolean; mask?: Buffer } = {},
): Buffer {
  const data = Buffer.from(payload);
  const first = ((opts.fin ?? true) ? 0x80 : 0) | ((opts.rsv ?? 0) << 4) | (opts.opcode ?? 1);
  const maskBit = opts.unmasked ? 0 : 0x80;
  let len: Buffer;
  if (data.length < 126) len = Buffer.from([maskBit | data.length]);
  else if (data.length < 65536) len = Buffer.from([maskBit | 126, data.length >> 8, data.length & 0xff]);
  else {
    len = Buffer.alloc(9);
    len[0] = maskBit | 127;
    len.writeBigUInt64BE(BigInt(data.length), 1);
  }
  if (opts.unmasked) return Buffer.concat([Buffer.from([first]), len, data]);
  const mask = opts.mask ?? Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const masked = Buffer.from(data.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([first]), len, mask, masked]);
}
