import type { ClientToServerEvents } from '../../../src/hub/hub.events.js';
import { connect, type HubClient } from '../../support/hub-client.js';

/**
 * Codes a client may see while a node dies, freezes or a shard moves: retry, nothing acknowledged was
 * lost (listed in docs/reliability.md). Anything else, a thrown error ('thrown') or an ack of the wrong
 * shape ('malformed_ack') included, is a finding that fails the run.
 */
export const TRANSIENT = new Set([
  'not_owner',
  'timeout',
  'service_unavailable',
  'disconnected',
  'ack_timeout',
  'connect_error',
]);

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `work`, or nothing once `ms` have passed, whichever comes first; the timer goes when `work` ends first. */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Shared by the agents of one chaos run: where to connect, when to stop, what went wrong. */
export class ChaosContext {
  stopped = false;
  readonly failures = new Map<string, number>();
  readonly violations: string[] = [];
  /** Successful steps per agent. */
  readonly progress: Record<string, number> = {};
  /** Agents in the middle of a step now (one that does not stop after the run is named by this). */
  readonly inStep = new Set<string>();
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

/** An ack as the hub protocol defines it: `{ ok: true, data? }` or `{ ok: false, error: { code, message } }`. */
function wellFormed(r: unknown): r is Ack<unknown> {
  if (!r || typeof r !== 'object') return false;
  const a = r as { ok?: unknown; error?: { code?: unknown; message?: unknown } };
  if (a.ok === true) return true;
  return a.ok === false && typeof a.error?.code === 'string' && typeof a.error.message === 'string';
}

/**
 * Calls a hub method, failing at once (code 'disconnected') when the socket drops before the ack,
 * instead of waiting out the ack timeout on a dead node.
 */
export function callLive<T = any>(
  s: HubClient,
  method: keyof ClientToServerEvents,
  ...args: unknown[]
): Promise<Ack<T>> {
  if (!s.connected) return Promise.resolve({ ok: false, error: { code: 'disconnected', message: 'not connected' } });
  return new Promise((resolve) => {
    const onDrop = () => resolve({ ok: false, error: { code: 'disconnected', message: 'socket dropped' } });
    s.once('disconnect', onDrop);
    (s.timeout(10_000) as unknown as { emitWithAck(ev: string, ...a: unknown[]): Promise<Ack<T>> })
      .emitWithAck(method, ...args)
      .then(
        (r) => {
          if (!wellFormed(r))
            resolve({
              ok: false,
              error: { code: 'malformed_ack', message: `${method}: ${JSON.stringify(r)?.slice(0, 200)}` },
            });
          else
            resolve(
              r.ok ? (r as Ack<T>) : { ok: false, error: { ...r.error, message: `${method}: ${r.error.message}` } },
            );
        },
        () => resolve({ ok: false, error: { code: 'ack_timeout', message: `${method}: no ack` } }),
      )
      .finally(() => s.off('disconnect', onDrop));
  });
}

/**
 * Keeps one socket for a user on some live node: (re)connects when needed and runs `setup` (join the
 * meeting, register the headset) on each new connection. Resolves undefined when that failed.
 */
export class Session {
  private socket?: HubClient;
  constructor(
    private readonly ctx: ChaosContext,
    private readonly token: string,
    private readonly setup: (s: HubClient) => Promise<Ack<unknown>>,
  ) {}

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

/**
 * Runs `step` until the run stops, backing off a little after a failed step, and counts the agent's
 * successful steps under `name` (its progress). A thrown error is counted under its `code` when it has
 * a transient one (no live node to connect to), else as 'thrown': never swallowed.
 */
export async function loop(
  ctx: ChaosContext,
  name: string,
  everyMs: number,
  step: () => Promise<boolean>,
): Promise<void> {
  ctx.progress[name] = 0;
  while (!ctx.stopped) {
    ctx.inStep.add(name);
    const ok = await step()
      .finally(() => ctx.inStep.delete(name))
      .catch((e: unknown) => {
        const code = (e as { code?: unknown })?.code;
        ctx.failure(
          typeof code === 'string' && TRANSIENT.has(code) ? code : 'thrown',
          `${name}: ${(e as Error)?.stack ?? String(e)}`,
        );
        return false;
      });
    if (ok) ctx.progress[name]!++;
    await pause(ok ? everyMs : everyMs + 200);
  }
}

/**
 * The result of an ack: the data, or undefined after counting the failure. `valid` checks the data's
 * shape (a positive ack without the fields the protocol promises counts as 'malformed_ack').
 */
export function take<T>(ctx: ChaosContext, r: Ack<T>, valid: (d: NoInfer<T>) => boolean): T | undefined {
  if (!r.ok) {
    ctx.failure(r.error.code, r.error.message);
    return undefined;
  }
  if (!valid(r.data)) {
    ctx.failure('malformed_ack', JSON.stringify(r.data)?.slice(0, 200));
    return undefined;
  }
  return r.data;
}
