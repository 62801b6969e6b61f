import type { ClientToServerEvents } from '../../../src/hub/hub.events.js';
import { connect, type HubClient } from '../../support/hub-client.js';

/** Codes a client may see while a node dies or a shard moves: retry, nothing acknowledged was lost. */
export const TRANSIENT = new Set(['not_owner', 'timeout', 'service_unavailable', 'disconnected', 'ack_timeout', 'connect_error']);

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Shared by the agents of one chaos run: where to connect, when to stop, what went wrong. */
export class ChaosContext {
  stopped = false;
  readonly failures = new Map<string, number>();
  readonly violations: string[] = [];
  constructor(private readonly liveUrls: () => string[]) {}

  pickUrl(): string {
    const urls = this.liveUrls();
    if (!urls.length) throw Object.assign(new Error('no live node'), { code: 'connect_error' });
    return urls[Math.floor(Math.random() * urls.length)]!;
  }

  /** Non-transient failures with the method and message (the first few), to say what a finding was. */
  readonly details: string[] = [];

  failure(code: string, detail?: string): void {
    this.failures.set(code, (this.failures.get(code) ?? 0) + 1);
    if (!TRANSIENT.has(code) && detail && this.details.length < 20) this.details.push(detail);
  }

  /** Failures whose code is not a transient failover symptom: each one is a finding. */
  unexpected(): Record<string, number> {
    return Object.fromEntries([...this.failures].filter(([code]) => !TRANSIENT.has(code)));
  }
}

type Ack<T> = { ok: true; data: T } | { ok: false; error: { code: string; message: string } };

/**
 * Calls a hub method, failing at once (code 'disconnected') when the socket drops before the ack,
 * instead of waiting out the ack timeout on a dead node.
 */
export function callLive<T = any>(s: HubClient, method: keyof ClientToServerEvents, ...args: unknown[]): Promise<Ack<T>> {
  if (!s.connected) return Promise.resolve({ ok: false, error: { code: 'disconnected', message: 'not connected' } });
  return new Promise((resolve) => {
    const onDrop = () => resolve({ ok: false, error: { code: 'disconnected', message: 'socket dropped' } });
    s.once('disconnect', onDrop);
    (s.timeout(10_000) as unknown as { emitWithAck(ev: string, ...a: unknown[]): Promise<Ack<T>> })
      .emitWithAck(method, ...args)
      .then((r) => resolve(r.ok ? r : { ok: false, error: { ...r.error, message: `${method}: ${r.error.message}` } }), () => resolve({ ok: false, error: { code: 'ack_timeout', message: 'no ack' } }))
      .finally(() => s.off('disconnect', onDrop));
  });
}

/**
 * Keeps one socket for a user on some live node: (re)connects when needed and runs `setup` (join the
 * meeting, register the headset) on each new connection. Resolves undefined when that failed.
 */
export class Session {
  private socket?: HubClient;
  constructor(private readonly ctx: ChaosContext, private readonly token: string, private readonly setup: (s: HubClient) => Promise<Ack<unknown>>) {}

  async ready(): Promise<HubClient | undefined> {
    if (this.socket?.connected) return this.socket;
    this.socket?.close();
    this.socket = undefined;
    let s: HubClient;
    try {
      s = await connect(this.ctx.pickUrl(), 'acme', { token: this.token });
    } catch {
      this.ctx.failure('connect_error');
      return undefined;
    }
    const r = await this.setup(s);
    if (!r.ok) {
      this.ctx.failure(r.error.code, `setup: ${r.error.message}`);
      s.close();
      return undefined;
    }
    this.socket = s;
    return s;
  }

  close(): void {
    this.socket?.close();
  }
}

/** Runs `step` until the run stops, backing off a little after a failed step. */
export async function loop(ctx: ChaosContext, everyMs: number, step: () => Promise<boolean>): Promise<void> {
  while (!ctx.stopped) {
    const ok = await step().catch(() => false);
    await pause(ok ? everyMs : everyMs + 200);
  }
}

/** The result of an ack: the data, or undefined after counting the failure. */
export function take<T>(ctx: ChaosContext, r: Ack<T>): T | undefined {
  if (r.ok) return r.data;
  ctx.failure(r.error.code, r.error.message);
  return undefined;
}
