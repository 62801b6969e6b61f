import { randomUUID } from 'node:crypto';
import { duplicateRedis, type RedisClient } from '../../data/redis.js';
import { z } from 'zod';
import { compactCaller, expandCaller, PERMISSION_CATALOGUE, type Caller } from '../../kernel/caller.js';
import { AppError, ERROR_CODES, toAppError, type ErrorCode } from '../../kernel/errors.js';
import type { Logger } from '../../observability/logger.js';
import { injectTrace, SpanKind, startSpan, TraceCarrier } from '../../observability/tracing.js';
import type { ActorKeys } from './actor-keys.js';
import { EnvelopeOutbox } from './envelope-outbox.js';
import { ActorAddressSchema } from './placement.js';

const RequestSchema = z.object({
  t: z.literal('req'),
  rid: z.string().min(1),
  from: z.string().min(1),
  to: ActorAddressSchema,
  msg: z.unknown(),
  dedupeId: z.string().min(1).max(200),
  attempt: z.number().int().positive(),
  /** Asked by a running turn (served by a shard's holder during its handoff). */
  nested: z.boolean().optional(),
  /** The asker's deadline (its Date.now()); absent from senders before decision 1140. */
  deadline: z.number().finite().optional(),
  /** The asker's trace context (W3C), when tracing is on: the owner's turn continues that trace. */
  trace: TraceCarrier.optional(),
});
const ReplySchema = z.object({
  t: z.literal('rep'),
  rid: z.string().min(1),
  ok: z.boolean(),
  value: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /**
   * The replying node's permission catalogue (decision 1156): the sender sends callers' permissions to it
   * as a mask while this matches its own. Absent from nodes before that decision.
   */
  pc: z.string().optional(),
});

export type RemoteRequest = z.infer<typeof RequestSchema>;
type Reply = z.infer<typeof ReplySchema>;

/** How long undelivered envelopes of a dead node linger before Redis drops them. */
const ENVELOPE_TTL_MS = 60_000;
/** Envelopes taken from a list per round trip. */
const BATCH = 256;

export interface TransportDeps {
  redis: RedisClient;
  keys: ActorKeys;
  nodeId: string;
  logger: Logger;
  /** Runs a request addressed to this node; the resolved value (or AppError) is the reply. */
  onRequest(req: RemoteRequest): Promise<unknown>;
  /** A masked request was sent again with its caller's permissions named (decision 1156). */
  onNamesResent?(): void;
  /** The inbox connection (the node's identity in Redis, see ConnectionWatch) closed, or is ready again. */
  onInboxConnection?(state: 'closed' | 'ready'): void;
}

/**
 * The name of a node's inbox connection in Redis (`CLIENT LIST`): the node id is in it, and the
 * connection lives exactly as long as the node reads its inbox, so other nodes watch it to tell a
 * crashed node (decision 1116). Every version of the runtime has named it so.
 */
export function inboxConnectionName(nodeId: string): string {
  return `consult:actors-inbox:${nodeId}`;
}

/** Rebuilds a coded error that crossed the wire; unknown codes become `internal`. */
export function errorFromWire(e: { code: string; message: string }): AppError {
  const code = (e.code in ERROR_CODES ? e.code : 'internal') as ErrorCode;
  return new AppError(code, e.message);
}

interface Pending {
  node: string;
  /** The request with its caller's permissions named, kept while the one sent carried them as a mask. */
  named?: RemoteRequest;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  timer: NodeJS.Timeout;
}

/**
 * Acknowledged request/reply between nodes over Redis lists: one inbox and one reply list per node,
 * each drained by its own blocking connection up to BATCH envelopes per round trip (BLMPOP), so replies
 * never wait behind requests. Requests of one batch are served concurrently (the mailbox of each actor
 * still runs its turns one at a time, in arrival order); envelopes going out in the same event-loop turn
 * are written together (EnvelopeOutbox). Unlike pub/sub, a request waits in the list until the owner
 * reads it; the sender still times out and retries with the same de-duplication id if no reply comes.
 */
export class RedisTransport {
  private readonly pending = new Map<string, Pending>();
  /** Each peer's permission catalogue, from its last reply (decision 1156). */
  private readonly catalogues = new Map<string, string>();
  private readonly readers: RedisClient[];
  private readonly outbox: EnvelopeOutbox;
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(private readonly deps: TransportDeps) {
    this.outbox = new EnvelopeOutbox(deps.redis, ENVELOPE_TTL_MS);
    this.readers = (['inbox', 'replies'] as const).map((list) => {
      const conn = duplicateRedis(deps.redis, {
        connectionName: list === 'inbox' ? inboxConnectionName(deps.nodeId) : `consult:actors-${list}:${deps.nodeId}`,
        maxRetriesPerRequest: null,
        enableAutoPipelining: false,
      });
      conn.on('error', (err) =>
        deps.logger.debug({ component: 'actors', list, err: err.message }, 'actor list connection error'),
      );
      if (list === 'inbox' && deps.onInboxConnection) {
        const notify = deps.onInboxConnection;
        conn.on('close', () => this.running && notify('closed'));
        conn.on('ready', () => this.running && notify('ready'));
      }
      return conn;
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const { keys, nodeId } = this.deps;
    this.loops = [
      this.readLoop(this.readers[0]!, keys.inbox(nodeId), (raw) => this.onRequestEnvelope(raw)),
      this.readLoop(this.readers[1]!, keys.replies(nodeId), (raw) => this.onReplyEnvelope(raw)),
    ];
  }

  /** Sends a request to `node` and resolves with its reply, or rejects with `timeout` after `timeoutMs`. */
  request(
    node: string,
    body: Omit<RemoteRequest, 't' | 'rid' | 'from' | 'trace'>,
    timeoutMs: number,
  ): Promise<unknown> {
    const rid = randomUUID();
    const trace = injectTrace();
    const env: RemoteRequest = { t: 'req', rid, from: this.deps.nodeId, ...body, ...(trace ? { trace } : {}) };
    const compact = this.catalogues.get(node) === PERMISSION_CATALOGUE ? withCompactCaller(env) : undefined;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(rid);
        reject(new AppError('timeout', `no reply from node ${node}`));
      }, timeoutMs);
      this.pending.set(rid, { node, resolve, reject, timer, ...(compact ? { named: env } : {}) });
      this.send(node, compact ?? env);
    });
  }

  private send(node: string, env: RemoteRequest): void {
    this.outbox.send(this.deps.keys.inbox(node), env).catch((e) => {
      const p = this.pending.get(env.rid);
      if (!p) return;
      clearTimeout(p.timer);
      this.pending.delete(env.rid);
      p.reject(new AppError('service_unavailable', 'actor transport unavailable', { cause: e }));
    });
  }

  /**
   * Gives up at once on requests waiting for nodes that left membership (crashed: no heartbeat for a
   * lease), so their senders re-route now instead of at their attempt timeout. A late reply is ignored;
   * a late execution is answered from the remembered reply when the sender retries with its dedupeId.
   */
  abandon(nodes: ReadonlySet<string>): void {
    for (const node of nodes) this.catalogues.delete(node);
    for (const [rid, p] of this.pending) {
      if (!nodes.has(p.node)) continue;
      this.pending.delete(rid);
      clearTimeout(p.timer);
      p.reject(new AppError('service_unavailable', `node ${p.node} left`));
    }
  }

  /** Stops reading, answers requests still in the inbox with not_owner so senders re-route at once. */
  async stop(): Promise<void> {
    this.running = false;
    for (const r of this.readers) r.disconnect();
    await Promise.all(this.loops.map((l) => l.catch(() => undefined)));
    for (const [rid, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new AppError('service_unavailable', 'actor system stopped'));
      this.pending.delete(rid);
    }
    const left = await this.deps.redis
      .lrange(this.deps.keys.inbox(this.deps.nodeId), 0, -1)
      .catch(() => [] as string[]);
    await this.deps.redis.del(this.deps.keys.inbox(this.deps.nodeId)).catch(() => undefined);
    for (const raw of left) this.refuse(raw);
    await this.outbox.flush().catch(() => undefined);
  }

  private refuse(raw: string): void {
    const parsed = RequestSchema.safeParse(safeJson(raw));
    if (!parsed.success) return;
    const error = { code: 'not_owner', message: 'node is shutting down' };
    const reply: Reply = { t: 'rep', rid: parsed.data.rid, ok: false, error, pc: PERMISSION_CATALOGUE };
    this.outbox.send(this.deps.keys.replies(parsed.data.from), reply).catch(() => undefined);
  }

  /** Drains `key`: blocks up to a second for the first envelope, then takes up to BATCH at once. */
  private async readLoop(conn: RedisClient, key: string, handle: (raw: string) => void): Promise<void> {
    while (this.running) {
      let popped: [string, string[]] | null;
      try {
        popped = (await conn.call('BLMPOP', 1, 1, key, 'RIGHT', 'COUNT', BATCH)) as [string, string[]] | null;
      } catch (err) {
        if (!this.running) return;
        this.deps.logger.warn({ component: 'actors', err: (err as Error).message }, 'actor list read failed');
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      for (const raw of popped?.[1] ?? []) {
        // One envelope that breaks its handler must not end the loop (and with it this node's inbox).
        try {
          handle(raw);
        } catch (err) {
          this.deps.logger.error(
            { component: 'actors', code: 'internal', list: key, err },
            'actor envelope handler failed',
          );
        }
      }
    }
  }

  private onRequestEnvelope(raw: string): void {
    const parsed = RequestSchema.safeParse(safeJson(raw));
    if (!parsed.success) {
      this.deps.logger.warn({ component: 'actors' }, 'dropped a malformed request envelope');
      return;
    }
    const req = withExpandedCaller(parsed.data);
    if (req) {
      void this.serve(req);
      return;
    }
    // A mask over another catalogue (a node of another release): not served; the sender sends the names.
    const error = { code: 'service_unavailable', message: 'permission catalogue differs' };
    const reply: Reply = { t: 'rep', rid: parsed.data.rid, ok: false, error, pc: PERMISSION_CATALOGUE };
    this.outbox.send(this.deps.keys.replies(parsed.data.from), reply).catch(() => undefined);
  }

  private onReplyEnvelope(raw: string): void {
    const parsed = ReplySchema.safeParse(safeJson(raw));
    if (parsed.success) this.settle(parsed.data);
    else this.deps.logger.warn({ component: 'actors' }, 'dropped a malformed reply envelope');
  }

  private settle(rep: Reply): void {
    const p = this.pending.get(rep.rid);
    if (!p) return;
    if (rep.pc) this.catalogues.set(p.node, rep.pc);
    else this.catalogues.delete(p.node);
    if (p.named && rep.pc !== PERMISSION_CATALOGUE) {
      // The mask went to a node that reads another catalogue, or none (an earlier release, which
      // granted the turn no permission): the same request again, with the permissions named.
      const named = p.named;
      delete p.named;
      this.deps.onNamesResent?.();
      this.send(p.node, named);
      return;
    }
    this.pending.delete(rep.rid);
    clearTimeout(p.timer);
    if (rep.ok) p.resolve(rep.value);
    else p.reject(errorFromWire(rep.error ?? { code: 'internal', message: 'remote failure' }));
  }

  private async serve(req: RemoteRequest): Promise<void> {
    let reply: Reply;
    try {
      reply = { t: 'rep', rid: req.rid, ok: true, value: await this.deps.onRequest(req), pc: PERMISSION_CATALOGUE };
    } catch (e) {
      const err = toAppError(e);
      reply = {
        t: 'rep',
        rid: req.rid,
        ok: false,
        error: { code: err.code, message: err.code === 'internal' ? 'actor turn failed' : err.message },
        pc: PERMISSION_CATALOGUE,
      };
    }
    await this.outbox
      .send(this.deps.keys.replies(req.from), reply)
      .catch((err) =>
        this.deps.logger.warn({ component: 'actors', err: (err as Error).message }, 'reply not delivered'),
      );
  }
}

/** Serves a request another node sent (`run`) in a span continuing the asker's trace (the context in the envelope). */
export function servedInSpan(r: RemoteRequest, run: () => Promise<unknown>): Promise<unknown> {
  const span = startSpan(`actor serve ${r.to.kind}`, {
    kind: SpanKind.SERVER,
    parent: r.trace,
    onlyWithParent: true,
    attributes: { 'actor.kind': r.to.kind, 'actor.from': r.from, 'actor.attempt': r.attempt, tenant: r.to.tenant },
  });
  return span.run(run).then(
    (v) => (span.end(), v),
    (e) => (span.end(e), Promise.reject(e)),
  );
}

/** A message's caller, where it has one (every actor message that acts for someone: `msg.caller`). */
function callerOf(msg: unknown): Record<string, unknown> | undefined {
  if (typeof msg !== 'object' || msg === null) return undefined;
  const c = (msg as { caller?: unknown }).caller;
  return typeof c === 'object' && c !== null && !Array.isArray(c) ? (c as Record<string, unknown>) : undefined;
}

/** The request with its caller's permissions as a mask; undefined when there is nothing to shorten. */
function withCompactCaller(env: RemoteRequest): RemoteRequest | undefined {
  const caller = callerOf(env.msg);
  if (!caller || !Array.isArray(caller.permissions) || caller.permissions.length === 0) return undefined;
  const wire = compactCaller(caller as unknown as Caller);
  if (wire === (caller as unknown)) return undefined;
  return { ...env, msg: { ...(env.msg as object), caller: wire } };
}

/** The request with its caller's mask read back into names; undefined when the mask is not this node's. */
function withExpandedCaller(req: RemoteRequest): RemoteRequest | undefined {
  const caller = callerOf(req.msg);
  if (!caller || !('pm' in caller)) return req;
  const expandedCaller = expandCaller(caller);
  if (!expandedCaller) return undefined;
  return { ...req, msg: { ...(req.msg as object), caller: expandedCaller } };
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
