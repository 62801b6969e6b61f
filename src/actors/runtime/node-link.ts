import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import type { RedisClient } from '../../data/redis.js';
import type { Logger } from '../../observability/logger.js';

/** Where a node listens for its peers' links, and the address it tells them (decision 1186). */
export interface LinkSettings {
  /** The address the listener binds (ACTOR_LINK_HOST). */
  host: string;
  /** Its port; 0: any free one (ACTOR_LINK_PORT). */
  port: number;
  /** The address peers dial (ACTOR_LINK_ADVERTISE); default the bound one, or this host's first external IPv4 address when it binds every interface. */
  advertise?: string;
}

/** A frame longer than this closes the link: an envelope is a few kilobytes. */
const MAX_FRAME = 16 * 1024 * 1024;
/** Before the handshake has finished, a frame longer than this closes the connection (its frames are small). */
const MAX_HANDSHAKE_FRAME = 4096;
/** A link whose handshake has not finished by then is closed. */
const HANDSHAKE_MS = 2_000;
/** After a failed dial, a peer is reached by the lists for this long before the next try. */
const RETRY_MS = 5_000;
/** How long a published address lives in Redis; it is written again at a third of it. */
const ADDRESS_TTL_MS = 10 * 60_000;

type Handshake =
  | { t: 'challenge'; node: string; n: string }
  | { t: 'hello'; from: string; to: string; n: string; mac: string }
  | { t: 'welcome'; mac: string };

export interface NodeLinksDeps {
  redis: RedisClient;
  nodeId: string;
  /** Redis key of a node's published address. */
  addressKey(nodeId: string): string;
  /** Redis key of the cluster's link secret (whoever reads Redis may write inboxes: the same trust). */
  secretKey: string;
  settings: LinkSettings;
  logger: Logger;
  /** A frame after the handshake: on a link a peer dialled, a request; on one this node dialled, a reply. */
  onFrame(frame: unknown, link: NodeLink): void;
  /** A link that was open closed. */
  onClose(link: NodeLink): void;
}

/**
 * Direct links between the nodes of one cluster (decision 1186): each node listens on a TCP port it
 * publishes in Redis; a node that asks another dials it once and keeps the link. Requests go one way on a
 * link and replies come back on it. Both ends prove they hold the cluster's secret (kept in Redis: a node
 * that can read it could as well write to another node's inbox list) by an HMAC of the other's nonce, the
 * dialled node also that it is the node the dialler meant. Frames are a 4-byte length and JSON; the frames
 * written during one turn of the event loop leave together (the turn's first batch on the next tick).
 * A peer that cannot be dialled is asked over the Redis lists, which stay the way for everything else.
 */
export class NodeLinks {
  private server?: net.Server;
  private address?: string;
  private publishTimer?: NodeJS.Timeout;
  private closed = false;
  /** Dialled links by peer: open, being dialled, or failed until a time. */
  private readonly dialled = new Map<string, NodeLink | Promise<void> | number>();
  private readonly accepted = new Set<NodeLink>();

  constructor(private readonly deps: NodeLinksDeps) {}

  /** Listens and publishes this node's address; false (logged) when it cannot: peers then use the lists. */
  async listen(): Promise<boolean> {
    if (this.server || this.closed) return !!this.server;
    const { settings, logger } = this.deps;
    const server = net.createServer((socket) => this.accept(socket));
    this.server = server;
    try {
      await this.secret();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(settings.port, settings.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => logger.warn({ component: 'actors', err: err.message }, 'node link listener error'));
      const port = (server.address() as AddressInfo).port;
      this.address = JSON.stringify({ host: advertised(settings), port });
      await this.publish();
      this.publishTimer = setInterval(
        () =>
          void this.publish().catch((err: Error) =>
            logger.warn({ component: 'actors', err: err.message }, 'node link address not published'),
          ),
        ADDRESS_TTL_MS / 3,
      );
      this.publishTimer.unref();
      return true;
    } catch (err) {
      logger.warn(
        { component: 'actors', code: 'service_unavailable', err: (err as Error).message },
        'node link not listening: peers ask this node over Redis',
      );
      server.close();
      this.server = undefined;
      return false;
    }
  }

  /** The open link to `peer`, or undefined (a dial starts unless one is under way or failed lately). */
  ready(peer: string): NodeLink | undefined {
    const entry = this.dialled.get(peer);
    // A link whose socket is destroyed but has not yet emitted 'close' is gone: dialled again at once.
    if (entry instanceof NodeLink && entry.open && !entry.socket.destroyed) return entry;
    if (this.closed || entry instanceof Promise || (typeof entry === 'number' && entry > Date.now())) return undefined;
    this.dialled.set(
      peer,
      this.dial(peer).catch((err: Error) => {
        this.deps.logger.debug({ component: 'actors', peer, err: err.message }, 'node link not dialled');
        if (!this.closed) this.dialled.set(peer, Date.now() + RETRY_MS);
      }),
    );
    return undefined;
  }

  /** Closes the listener and every link; unpublishes the address. */
  async stop(): Promise<void> {
    this.closed = true;
    clearInterval(this.publishTimer);
    for (const entry of this.dialled.values()) if (entry instanceof NodeLink) entry.close();
    for (const link of this.accepted) link.close();
    this.dialled.clear();
    this.accepted.clear();
    const server = this.server;
    this.server = undefined;
    if (server) {
      await this.deps.redis.del(this.deps.addressKey(this.deps.nodeId)).catch(() => undefined);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  private async publish(): Promise<void> {
    if (!this.address || this.closed) return;
    await this.deps.redis.set(this.deps.addressKey(this.deps.nodeId), this.address, 'PX', ADDRESS_TTL_MS);
  }

  /** The cluster's link secret, made by the first node that needs it. */
  private async secret(): Promise<Buffer> {
    const { redis, secretKey } = this.deps;
    const have = await redis.get(secretKey);
    if (have) return Buffer.from(have, 'base64url');
    await redis.set(secretKey, randomBytes(32).toString('base64url'), 'NX');
    const made = await redis.get(secretKey);
    if (!made) throw new Error('node link secret not readable');
    return Buffer.from(made, 'base64url');
  }

  private async dial(peer: string): Promise<void> {
    const raw = await this.deps.redis.get(this.deps.addressKey(peer));
    if (!raw) throw new Error('no published address');
    const { host, port } = JSON.parse(raw) as { host: string; port: number };
    const secret = await this.secret();
    const socket = net.connect({ host, port });
    socket.setNoDelay(true);
    const link = new NodeLink(peer, socket, true);
    const nonce = randomBytes(16).toString('base64url');
    await new Promise<void>((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        socket.destroy();
        reject(new Error(why));
      };
      const timer = setTimeout(() => fail('handshake timed out'), HANDSHAKE_MS);
      socket.once('error', (err) => fail(err.message));
      socket.once('close', () => fail('closed during the handshake'));
      let step: 'challenge' | 'welcome' = 'challenge';
      readFrames(socket, link, (frame) => {
        if (link.open) return this.deps.onFrame(frame, link);
        const h = frame as Handshake;
        if (step === 'challenge' && h.t === 'challenge' && h.node === peer && typeof h.n === 'string') {
          step = 'welcome';
          const mac = sign(secret, 'c', h.n, this.deps.nodeId, peer);
          link.write({ t: 'hello', from: this.deps.nodeId, to: peer, n: nonce, mac });
          return;
        }
        if (step === 'welcome' && h.t === 'welcome' && same(h.mac, sign(secret, 's', nonce, peer, this.deps.nodeId))) {
          clearTimeout(timer);
          socket.removeAllListeners('error').removeAllListeners('close');
          this.opened(link);
          resolve();
          return;
        }
        fail(`refused by ${peer} (${step})`);
      });
    });
  }

  private accept(socket: net.Socket): void {
    if (this.closed) return void socket.destroy();
    socket.setNoDelay(true);
    const link = new NodeLink('', socket, false);
    const nonce = randomBytes(16).toString('base64url');
    const timer = setTimeout(() => socket.destroy(), HANDSHAKE_MS);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => clearTimeout(timer));
    let checking = false;
    readFrames(socket, link, (frame) => {
      if (link.open) return this.deps.onFrame(frame, link);
      const h = frame as Handshake;
      if (checking || h.t !== 'hello' || h.to !== this.deps.nodeId || typeof h.from !== 'string' || !h.n)
        return void socket.destroy();
      checking = true;
      this.secret().then(
        (secret) => {
          if (!same(h.mac, sign(secret, 'c', nonce, h.from, this.deps.nodeId)) || socket.destroyed)
            return void socket.destroy();
          clearTimeout(timer);
          link.peer = h.from;
          link.write({ t: 'welcome', mac: sign(secret, 's', h.n, this.deps.nodeId, h.from) });
          this.accepted.add(link);
          this.opened(link);
        },
        () => socket.destroy(),
      );
    });
    link.write({ t: 'challenge', node: this.deps.nodeId, n: nonce });
  }

  private opened(link: NodeLink): void {
    link.open = true;
    if (this.closed) return link.close();
    if (link.dialled) this.dialled.set(link.peer, link);
    link.socket.on('error', () => link.socket.destroy());
    link.socket.once('close', () => {
      link.open = false;
      if (link.dialled) {
        if (this.dialled.get(link.peer) === link) this.dialled.delete(link.peer);
      } else this.accepted.delete(link);
      this.deps.onClose(link);
    });
  }
}

/**
 * One end of a link: `peer` is the other node. `send` queues a frame (false when the link is closed), the
 * turn's frames leaving in one buffer and one write.
 */
export class NodeLink {
  open = false;
  /** The frames' JSON queued this turn, written together by `flush`. */
  private queued: string[] = [];
  constructor(
    public peer: string,
    readonly socket: net.Socket,
    /** This node dialled it: it sends requests on it and reads replies. */
    readonly dialled: boolean,
  ) {}

  send(frame: object): boolean {
    if (!this.open || this.socket.destroyed || !this.socket.writable) return false;
    this.write(frame);
    return true;
  }

  /** Queues a frame (handshake frames too) until the turn's flush. */
  write(frame: object): void {
    if (this.queued.push(JSON.stringify(frame)) === 1) schedule(this);
  }

  /**
   * Writes the queued frames, each a 4-byte length and its JSON, in one buffer: one socket write a turn
   * instead of one a frame (no corked chunk list for the socket to gather).
   */
  flush(): void {
    const frames = this.queued;
    if (!frames.length) return;
    this.queued = [];
    if (this.socket.destroyed) return;
    const sizes = new Array<number>(frames.length);
    let total = 0;
    for (let i = 0; i < frames.length; i++) total += 4 + (sizes[i] = Buffer.byteLength(frames[i]!));
    const out = Buffer.allocUnsafe(total);
    let at = 0;
    for (let i = 0; i < frames.length; i++) {
      out.writeUInt32BE(sizes[i]!, at);
      at += 4 + out.write(frames[i]!, at + 4, sizes[i]!, 'utf8');
    }
    this.socket.write(out);
  }

  close(): void {
    this.open = false;
    this.queued = [];
    this.socket.destroy();
  }
}

/** A check-phase flush is queued for this turn of the event loop. */
let armed = false;
const later: NodeLink[] = [];

/** The turn's first link with frames is written on the next tick, the others at the turn's check phase. */
function schedule(link: NodeLink): void {
  if (armed) return void later.push(link);
  armed = true;
  process.nextTick(flush, link);
  setImmediate(flushLater);
}

function flushLater(): void {
  armed = false;
  for (const link of later.splice(0)) link.flush();
}

function flush(link: NodeLink): void {
  link.flush();
}

/**
 * Calls `onFrame` with each whole frame read from the socket, parsed; a frame too long (before the link
 * is open, longer than a handshake's) or not JSON closes it.
 */
function readFrames(socket: net.Socket, link: NodeLink, onFrame: (frame: unknown) => void): void {
  let buf: Buffer | undefined;
  socket.on('data', (chunk: Buffer) => {
    buf = buf?.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 4) {
      const size = buf.readUInt32BE(0);
      if (size > (link.open ? MAX_FRAME : MAX_HANDSHAKE_FRAME)) return void socket.destroy();
      if (buf.length < 4 + size) break;
      let frame: unknown;
      try {
        frame = JSON.parse(buf.toString('utf8', 4, 4 + size));
      } catch {
        return void socket.destroy();
      }
      buf = buf.subarray(4 + size);
      if (typeof frame !== 'object' || frame === null) return void socket.destroy();
      onFrame(frame);
      if (socket.destroyed) return;
    }
  });
}

function sign(secret: Buffer, side: 'c' | 's', nonce: string, from: string, to: string): string {
  return createHmac('sha256', secret).update(`${side}|${nonce}|${from}|${to}`).digest('base64url');
}

function same(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The address peers dial: the configured one, the bound one, or for a wildcard bind this host's first external IPv4 address. */
function advertised(s: LinkSettings): string {
  if (s.advertise) return s.advertise;
  if (s.host !== '0.0.0.0' && s.host !== '::') return s.host;
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}
