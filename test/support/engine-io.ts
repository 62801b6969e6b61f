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
  if (open.status !== 200 || !open.text.startsWith('0{')) throw new Error(`polling handshake answered ${open.status}: ${open.text.slice(0, 200)}`);
  const { sid } = JSON.parse(open.text.slice(1)) as { sid: string };
  return {
    sid,
    async get() {
      const r = await request(url, 'GET', pollingPath(sid), { tenant });
      if (r.status !== 200) throw new Error(`long-poll GET answered ${r.status}: ${r.text.slice(0, 200)}`);
      return packets(r.text);
    },
    post: (...p: string[]) => request(url, 'POST', pollingPath(sid), { tenant, rawBody: p.join(RECORD_SEPARATOR), headers: { 'content-type': 'text/plain;charset=UTF-8' } }),
  };
}

/**
 * Reads long-poll GETs until a packet matching `match` arrives (engine.io pings and other packets are
 * skipped; a ping is answered with a pong so the session stays open). Bounded by `maxPolls`.
 */
export async function pollUntil(session: PollingSession, match: (packet: string) => boolean, maxPolls = 10): Promise<string> {
  for (let i = 0; i < maxPolls; i++) {
    for (const p of await session.get()) {
      if (match(p)) return p;
      if (p === '2') await session.post('3');
    }
  }
  throw new Error(`no matching packet within ${maxPolls} long polls`);
}
