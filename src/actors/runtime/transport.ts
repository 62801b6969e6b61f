import { randomUUID } from 'node:crypto';
import { duplicateRedis, type RedisClient } from '../../data/redis.js';
import { PERMISSION_CATALOGUE } from '../../kernel/caller.js';
import { AppError, toAppError } from '../../kernel/errors.js';
import type { Logger } from '../../observability/logger.js';
import { injectTrace, SpanKind, startSpan } from '../../observability/tracing.js';
import type { ActorKeys } from './actor-keys.js';
import { EnvelopeOutbox } from './envelope-outbox.js';
import { NodeLink, NodeLinks, type LinkSettings } from './node-link.js';
import {
  errorFromWire,
  ReplySchema,
  RequestSchema,
  safeJson,
  withCompactCaller,
  withExpandedCaller,
  type RemoteRequest,
  type Reply,
} from './wire.js';

export { errorFromWire, type RemoteRequest } from './wire.js';

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
  /** Direct links to the peers (decision 1186); without, every envelope goes by the lists. */
  link?: LinkSettings;
  /** A request left, by a direct link or the lists. */
  onSent?(path: 'link' | 'lists'): void;
}

/**
 * The name of a node's inbox connection in Redis (`CLIENT LIST`): the node id is in it, and the
 * connection lives exactly as long as the node reads its inbox, so other nodes watch it to tell a
 * crashed node (decision 1116). Every version of the runtime has named it so.
 */
export function inboxConnectionName(nodeId: string): string {
  return `consult:actors-inbox:${nodeId}`;
}

interface Pending {
  node: string;
  /** The request with its caller's permissions named, kept while the one sent carried them as a mask. */
  named?: RemoteRequest;
  /** The envelope as last sent, and how: sent again by the lists when its link closes unanswered. */
  sent?: RemoteRequest;
  path?: NodeLink | 'lists';
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
  private readonly links?: NodeLinks;
  /**
   * Requests in flight by the lists, per lane (a peer and one actor there): the lane's requests take the
   * peer's link once none is, so an actor's mailbox gets one node's requests in the order they were sent.
   */
  private readonly viaLists = new Map<string, number>();
  /** Requests for a peer's open link, held per lane until the lane's requests by the lists are answered. */
  private readonly held = new Map<string, { node: string; list: RemoteRequest[] }>();

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
    if (deps.link)
      this.links = new NodeLinks({
        redis: deps.redis,
        nodeId: deps.nodeId,
        addressKey: deps.keys.link,
        secretKey: deps.keys.linkSecret,
        settings: deps.link,
        logger: deps.logger,
        onFrame: (frame, link) => (link.dialled ? this.onReply(frame) : this.onRequest(frame, link)),
        onClose: (link) => this.onLinkClosed(link),
      });
  }

  /** Listens for peers' links (a node that hosts actors); resolves false when it cannot (then the lists serve). */
  listen(): Promise<boolean> {
    return this.links?.listen() ?? Promise.resolve(false);
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
        const p = this.pending.get(rid);
        if (p) this.finish(rid, p);
        reject(new AppError('timeout', `no reply from node ${node}`));
      }, timeoutMs);
      this.pending.set(rid, { node, resolve, reject, timer, ...(compact ? { named: env } : {}) });
      this.send(node, compact ?? env);
    });
  }

  /**
   * Sends a pending request: by the peer's open link once nothing to the same actor is in flight by the
   * lists (held until then, so the actor gets one node's requests in the order they were sent; other
   * actors' requests go on), else by the lists.
   */
  private send(node: string, env: RemoteRequest): void {
    const p = this.pending.get(env.rid);
    if (!p) return;
    p.sent = env;
    const link = this.links?.ready(node);
    if (link) {
      const lane = laneOf(node, env);
      const held = this.held.get(lane);
      if (held) return void held.list.push(env);
      if (this.viaLists.has(lane)) return void this.held.set(lane, { node, list: [env] });
      if (link.send(env)) {
        p.path = link;
        this.deps.onSent?.('link');
        return;
      }
    }
    p.path = 'lists';
    const lane = laneOf(node, env);
    this.viaLists.set(lane, (this.viaLists.get(lane) ?? 0) + 1);
    this.deps.onSent?.('lists');
    this.outbox.send(this.deps.keys.inbox(node), env).catch((e) => {
      const p = this.pending.get(env.rid);
      if (!p) return;
      this.finish(env.rid, p);
      p.reject(new AppError('service_unavailable', 'actor transport unavailable', { cause: e }));
    });
  }

  /** A request left the pending set (answered, given up or failed): its peer's held requests may go. */
  private finish(rid: string, p: Pending): void {
    clearTimeout(p.timer);
    this.pending.delete(rid);
    this.left(p);
  }

  /** A request's sending is over (answered, given up, or to be sent again): counted off its path. */
  private left(p: Pending): void {
    const path = p.path;
    p.path = undefined;
    if (path !== 'lists' || !p.sent) return;
    const lane = laneOf(p.node, p.sent);
    const left = (this.viaLists.get(lane) ?? 1) - 1;
    if (left > 0) return void this.viaLists.set(lane, left);
    this.viaLists.delete(lane);
    this.release(lane);
  }

  /** Sends the requests held for a lane, in order (by the lists if the link closed meanwhile). */
  private release(lane: string): void {
    const held = this.held.get(lane);
    if (!held) return;
    this.held.delete(lane);
    for (const env of held.list) this.send(held.node, env);
  }

  /** A link closed: its unanswered requests go again by the lists (the owner answers a repeat once). */
  private onLinkClosed(link: NodeLink): void {
    if (!link.dialled) return;
    const again: RemoteRequest[] = [];
    for (const p of this.pending.values())
      if (p.path === link && p.sent) {
        p.path = undefined;
        again.push(p.sent);
      }
    for (const env of again) this.send(link.peer, env);
    for (const [lane, held] of [...this.held]) if (held.node === link.peer) this.release(lane);
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
      this.finish(rid, p);
      p.reject(new AppError('service_unavailable', `node ${p.node} left`));
    }
  }

  /** Stops reading, answers requests still in the inbox with not_owner so senders re-route at once. */
  async stop(): Promise<void> {
    this.running = false;
    for (const r of this.readers) r.disconnect();
    await Promise.all(this.loops.map((l) => l.catch(() => undefined)));
    for (const [rid, p] of this.pending) {
      this.finish(rid, p);
      p.reject(new AppError('service_unavailable', 'actor system stopped'));
    }
    this.held.clear();
    const left = await this.deps.redis
      .lrange(this.deps.keys.inbox(this.deps.nodeId), 0, -1)
      .catch(() => [] as string[]);
    await this.deps.redis.del(this.deps.keys.inbox(this.deps.nodeId)).catch(() => undefined);
    for (const raw of left) this.refuse(raw);
    await this.outbox.flush().catch(() => undefined);
    await this.links?.stop();
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
    this.onRequest(safeJson(raw));
  }

  /** A request from the inbox, or from a link a peer dialled (`link`: its reply goes back on it). */
  private onRequest(frame: unknown, link?: NodeLink): void {
    const parsed = RequestSchema.safeParse(frame);
    if (!parsed.success) {
      this.deps.logger.warn({ component: 'actors' }, 'dropped a malformed request envelope');
      return;
    }
    const req = withExpandedCaller(parsed.data);
    if (req) {
      void this.serve(req, link);
      return;
    }
    // A mask over another catalogue (a node of another release): not served; the sender sends the names.
    const error = { code: 'service_unavailable', message: 'permission catalogue differs' };
    this.reply({ t: 'rep', rid: parsed.data.rid, ok: false, error, pc: PERMISSION_CATALOGUE }, parsed.data.from, link);
  }

  private onReplyEnvelope(raw: string): void {
    this.onReply(safeJson(raw));
  }

  private onReply(frame: unknown): void {
    const parsed = ReplySchema.safeParse(frame);
    if (parsed.success) this.settle(parsed.data);
    else this.deps.logger.warn({ component: 'actors' }, 'dropped a malformed reply envelope');
  }

  /** Answers on the request's link while it is open, else by the asker's reply list. */
  private reply(reply: Reply, to: string, link?: NodeLink): Promise<void> {
    if (link?.send(reply)) return Promise.resolve();
    return this.outbox.send(this.deps.keys.replies(to), reply);
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
      this.left(p);
      this.send(p.node, named);
      return;
    }
    this.finish(rep.rid, p);
    if (rep.ok) p.resolve(rep.value);
    else p.reject(errorFromWire(rep.error ?? { code: 'internal', message: 'remote failure' }));
  }

  private async serve(req: RemoteRequest, link?: NodeLink): Promise<void> {
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
    await this.reply(reply, req.from, link).catch((err) =>
      this.deps.logger.warn({ component: 'actors', err: (err as Error).message }, 'reply not delivered'),
    );
  }
}

/** A peer and one actor there: the order of requests is kept per lane when a link takes over. */
function laneOf(node: string, env: RemoteRequest): string {
  return `${node}|${env.to.tenant}|${env.to.kind}|${env.to.id}`;
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
