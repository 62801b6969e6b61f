import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { AppError, ERROR_CODES, toAppError, type ErrorCode } from '../../core/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { ActorKeys } from './actor-keys.js';
import { ActorAddressSchema } from './placement.js';

const RequestSchema = z.object({
  t: z.literal('req'),
  rid: z.string().min(1),
  from: z.string().min(1),
  to: ActorAddressSchema,
  msg: z.unknown(),
  dedupeId: z.string().min(1).max(200),
  attempt: z.number().int().positive(),
});
const ReplySchema = z.object({
  t: z.literal('rep'),
  rid: z.string().min(1),
  ok: z.boolean(),
  value: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
const EnvelopeSchema = z.discriminatedUnion('t', [RequestSchema, ReplySchema]);

export type RemoteRequest = z.infer<typeof RequestSchema>;
type Reply = z.infer<typeof ReplySchema>;

/** How long undelivered envelopes of a dead node linger before Redis drops them. */
const ENVELOPE_TTL_MS = 60_000;

export interface TransportDeps {
  redis: Redis;
  keys: ActorKeys;
  nodeId: string;
  logger: Logger;
  /** Runs a request addressed to this node; the resolved value (or AppError) is the reply. */
  onRequest(req: RemoteRequest): Promise<unknown>;
}

/** Rebuilds a coded error that crossed the wire; unknown codes become `internal`. */
export function errorFromWire(e: { code: string; message: string }): AppError {
  const code = (e.code in ERROR_CODES ? e.code : 'internal') as ErrorCode;
  return new AppError(code, e.message);
}

/**
 * Acknowledged request/reply between nodes over Redis lists (one inbox and one reply list per node,
 * read with a single BRPOP). Unlike pub/sub, a request waits in the list until the owner reads it;
 * the sender still times out and retries with the same de-duplication id if no reply comes.
 */
export class RedisTransport {
  private readonly pending = new Map<string, { resolve(v: unknown): void; reject(e: unknown): void; timer: NodeJS.Timeout }>();
  private readonly blocking: Redis;
  private running = false;
  private loop?: Promise<void>;

  constructor(private readonly deps: TransportDeps) {
    this.blocking = deps.redis.duplicate({ connectionName: `consult:actors-inbox:${deps.nodeId}`, maxRetriesPerRequest: null, enableAutoPipelining: false });
    this.blocking.on('error', (err) => deps.logger.debug({ component: 'actors', err: err.message }, 'inbox connection error'));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.readLoop();
  }

  /** Sends a request to `node` and resolves with its reply, or rejects with `timeout` after `timeoutMs`. */
  request(node: string, body: Omit<RemoteRequest, 't' | 'rid' | 'from'>, timeoutMs: number): Promise<unknown> {
    const rid = randomUUID();
    const env: RemoteRequest = { t: 'req', rid, from: this.deps.nodeId, ...body };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(rid);
        reject(new AppError('timeout', `no reply from node ${node}`));
      }, timeoutMs);
      this.pending.set(rid, { resolve, reject, timer });
      this.push(this.deps.keys.inbox(node), env).catch((e) => {
        clearTimeout(timer);
        this.pending.delete(rid);
        reject(new AppError('service_unavailable', 'actor transport unavailable', { cause: e }));
      });
    });
  }

  /** Stops reading, answers requests still in the inbox with not_owner so senders re-route at once. */
  async stop(): Promise<void> {
    this.running = false;
    this.blocking.disconnect();
    await this.loop?.catch(() => undefined);
    for (const [rid, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new AppError('service_unavailable', 'actor system stopped'));
      this.pending.delete(rid);
    }
    const left = await this.deps.redis.lrange(this.deps.keys.inbox(this.deps.nodeId), 0, -1).catch(() => [] as string[]);
    await this.deps.redis.del(this.deps.keys.inbox(this.deps.nodeId)).catch(() => undefined);
    await Promise.all(left.map((raw) => this.refuse(raw)));
  }

  private async refuse(raw: string): Promise<void> {
    const parsed = RequestSchema.safeParse(safeJson(raw));
    if (!parsed.success) return;
    const error = { code: 'not_owner', message: 'node is shutting down' };
    await this.push(this.deps.keys.replies(parsed.data.from), { t: 'rep', rid: parsed.data.rid, ok: false, error }).catch(() => undefined);
  }

  private async readLoop(): Promise<void> {
    const { keys, nodeId, logger } = this.deps;
    while (this.running) {
      let item: [string, string] | null;
      try {
        item = await this.blocking.brpop(keys.inbox(nodeId), keys.replies(nodeId), 1);
      } catch (err) {
        if (!this.running) return;
        logger.warn({ component: 'actors', err: (err as Error).message }, 'inbox read failed');
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      if (item) this.dispatch(item[1]);
    }
  }

  private dispatch(raw: string): void {
    const parsed = EnvelopeSchema.safeParse(safeJson(raw));
    if (!parsed.success) {
      this.deps.logger.warn({ component: 'actors' }, 'dropped a malformed envelope');
      return;
    }
    if (parsed.data.t === 'rep') this.settle(parsed.data);
    else void this.serve(parsed.data);
  }

  private settle(rep: Reply): void {
    const p = this.pending.get(rep.rid);
    if (!p) return;
    this.pending.delete(rep.rid);
    clearTimeout(p.timer);
    if (rep.ok) p.resolve(rep.value);
    else p.reject(errorFromWire(rep.error ?? { code: 'internal', message: 'remote failure' }));
  }

  private async serve(req: RemoteRequest): Promise<void> {
    let reply: Reply;
    try {
      reply = { t: 'rep', rid: req.rid, ok: true, value: await this.deps.onRequest(req) };
    } catch (e) {
      const err = toAppError(e);
      reply = { t: 'rep', rid: req.rid, ok: false, error: { code: err.code, message: err.code === 'internal' ? 'actor turn failed' : err.message } };
    }
    await this.push(this.deps.keys.replies(req.from), reply).catch((err) =>
      this.deps.logger.warn({ component: 'actors', err: (err as Error).message }, 'reply not delivered'),
    );
  }

  private async push(key: string, env: unknown): Promise<void> {
    await this.deps.redis.multi().lpush(key, JSON.stringify(env)).pexpire(key, ENVELOPE_TTL_MS).exec();
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
