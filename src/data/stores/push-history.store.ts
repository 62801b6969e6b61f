import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { Cluster } from 'ioredis';
import { APPEND, APPEND_ROSTERS, READ } from './push-history.scripts.js';

/** Recipients one append call carries at most (a meeting's roster beyond it takes several calls). */
const APPEND_BATCH = 64;

/** Where a recipient's history stands: its epoch (random, made with the stream) and last sequence number. */
export interface StreamPosition {
  epoch: string;
  seq: number;
}

/**
 * Where a push comes from, so sending it again records it once (decision 1133): an actor turn's push is
 * its actor (`source`), the turn (the shard's `epoch` and the turn's number under it, both growing) and its
 * place among the turn's pushes (`index`).
 */
export interface PushOrigin {
  source: string;
  epoch: number;
  turn: number;
  index: number;
}

/** One stored push: its sequence number, name and payload (JSON text). */
export interface StoredPush {
  seq: number;
  event: string;
  payload: string;
}

export type HistoryRead =
  | { kind: 'current'; position: StreamPosition }
  | { kind: 'ok'; position: StreamPosition; pushes: StoredPush[] }
  | { kind: 'resync'; position: StreamPosition };

export interface PushHistoryLimits {
  /** How long a push stays recoverable. */
  windowMs: number;
  /** How many pushes a recipient's history holds at most. */
  maxPushes: number;
  /** How long a stream's epoch and last number outlive its last push or read (and a meeting's roster its last change). */
  positionTtlMs: number;
}

/**
 * Per-recipient push histories (Redis streams, one per user or device, redis-keys `pushStream`) and the
 * rosters of meeting rooms (redis-keys `pushRoster`: the recipients logically in the room, whether or not
 * their sockets are connected right now). Each stream and its position hash share one hash tag, so a
 * script touches one cluster slot. What is recorded and for whom is src/realtime/push-history.ts's.
 */
export class PushHistoryStore {
  constructor(
    private readonly deps: {
      redis: RedisClient;
      keys: Pick<RedisKeys, 'pushStream' | 'pushPosition' | 'pushRoster'>;
      limits: PushHistoryLimits;
      /** A new epoch (random; tests may pin it). */
      epoch: () => string;
    },
  ) {}

  get limits(): PushHistoryLimits {
    return this.deps.limits;
  }

  /**
   * Appends one push and returns the recipient's position for it: with an origin already recorded, the
   * position it was given; undefined for a push of an older turn of its origin (recorded before).
   */
  async append(
    tenant: string,
    stream: string,
    event: string,
    payload: string,
    origin?: PushOrigin,
  ): Promise<StreamPosition | undefined> {
    return (await this.appendMany(tenant, [stream], event, payload, origin))[0];
  }

  /**
   * Appends one push to several recipients' histories (on a single server in one script call for up to
   * APPEND_BATCH recipients; on a cluster one call per recipient, each its own slot) and answers their positions in the order of `streams`, as `append`
   * would one by one. The calls are issued at once, in order: each recipient's history keeps the pushes
   * in the order they were appended.
   */
  async appendMany(
    tenant: string,
    streams: readonly string[],
    event: string,
    payload: string,
    origin?: PushOrigin,
  ): Promise<(StreamPosition | undefined)[]> {
    const { redis, keys } = this.deps;
    const args = this.appendArgs(event, payload, origin);
    // On a cluster each recipient's keys have a slot of their own (their hash tag is the recipient): one
    // call each. On a single server, one call for up to APPEND_BATCH recipients.
    const per = redis instanceof Cluster ? 1 : APPEND_BATCH;
    const calls: number[][] = [];
    for (let i = 0; i < streams.length; i += per)
      calls.push(Array.from({ length: Math.min(per, streams.length - i) }, (_, n) => i + n));
    const out: (StreamPosition | undefined)[] = new Array(streams.length);
    await Promise.all(
      calls.map(async (g) => {
        const k = g.flatMap((i) => [keys.pushStream(tenant, streams[i]!), keys.pushPosition(tenant, streams[i]!)]);
        const r = (await APPEND.run(redis, k, args)) as (string | number)[];
        g.forEach((i, n) => {
          const seq = Number(r[2 * n + 1]);
          out[i] = seq < 0 ? undefined : { epoch: String(r[2 * n]), seq };
        });
      }),
    );
    return out;
  }

  /**
   * Appends one push to the recipients `streams` names and to every recipient on the `rosters` (meeting
   * rooms; each recipient once), answering each recipient with its position, the named first, as
   * appendMany would. On a single server one script call reads the rosters and appends (no round trip
   * for the rosters first, one per push to a meeting); past APPEND_BATCH recipients, and on a cluster
   * (each recipient its own slot), the rosters are read first and appendMany carries the push.
   * Resolves once the appends were issued (on a cluster after the rosters' reads, on a single server at
   * once), to `written`, their answer: pushes issued in turn keep their order in every history.
   */
  async appendWithRosters(
    tenant: string,
    streams: readonly string[],
    rosters: readonly string[],
    event: string,
    payload: string,
    origin?: PushOrigin,
  ): Promise<{ written: Promise<{ stream: string; position: StreamPosition | undefined }[]> }> {
    const { redis, keys } = this.deps;
    const viaAppendMany = (members: string[]) => {
      const names = [...new Set([...streams, ...members])];
      return this.appendMany(tenant, names, event, payload, origin).then((ps) =>
        names.map((stream, i) => ({ stream, position: ps[i] })),
      );
    };
    const written =
      redis instanceof Cluster
        ? viaAppendMany((await Promise.all(rosters.map((r) => this.roster(r)))).flat())
        : Promise.resolve(await this.appendToRosters(tenant, streams, rosters, event, payload, origin, viaAppendMany));
    // Its caller may take it up after other awaits: a failure meanwhile is not an unhandled rejection.
    written.catch(() => undefined);
    return { written };
  }

  /**
   * The single server's appendWithRosters: the script's answer (its appends done), or for more recipients
   * than one call carries, appendMany's with the members it read. Awaited whole by appendWithRosters, so a
   * next push to the same rosters is issued after this one's appends (its roster could be smaller and fit).
   */
  private async appendToRosters(
    tenant: string,
    streams: readonly string[],
    rosters: readonly string[],
    event: string,
    payload: string,
    origin: PushOrigin | undefined,
    viaAppendMany: (members: string[]) => Promise<{ stream: string; position: StreamPosition | undefined }[]>,
  ): Promise<{ stream: string; position: StreamPosition | undefined }[]> {
    const { redis, keys } = this.deps;
    const [head, tail] = keys.pushStream(tenant, '\0').split('\0') as [string, string];
    const streamKey = keys.pushStream(tenant, '\0');
    const suffix = keys.pushPosition(tenant, '\0').slice(streamKey.length);
    const k = [
      ...streams.flatMap((s) => [keys.pushStream(tenant, s), keys.pushPosition(tenant, s)]),
      ...rosters.map((r) => keys.pushRoster(r)),
    ];
    const r = (await APPEND_ROSTERS.run(redis, k, [
      ...this.appendArgs(event, payload, origin),
      streams.length,
      ...streams,
      head,
      tail,
      suffix,
      APPEND_BATCH,
    ])) as (string | number)[];
    if (r[0] === 'many') return viaAppendMany(r.slice(1).map(String));
    const out: { stream: string; position: StreamPosition | undefined }[] = [];
    for (let i = 1; i + 2 < r.length; i += 3) {
      const seq = Number(r[i + 2]);
      out.push({ stream: String(r[i]), position: seq < 0 ? undefined : { epoch: String(r[i + 1]), seq } });
    }
    return out;
  }

  /** The pushes after `from` (or the current position without one); `peek` answers without the pushes. */
  async read(tenant: string, stream: string, from?: StreamPosition, peek = false): Promise<HistoryRead> {
    const { redis, keys, limits } = this.deps;
    const r = (await READ.eval(
      redis,
      2,
      keys.pushStream(tenant, stream),
      keys.pushPosition(tenant, stream),
      from?.epoch ?? '',
      from?.seq ?? 0,
      limits.windowMs,
      limits.positionTtlMs,
      this.deps.epoch(),
      peek ? '1' : '0',
    )) as [string, string, number, ...string[]];
    const [kind, epoch, seq, ...rest] = r;
    const position = { epoch, seq: Number(seq) };
    if (kind === 'current') return { kind, position };
    if (kind === 'resync') return { kind, position };
    const pushes: StoredPush[] = [];
    for (let i = 0; i + 2 < rest.length; i += 3)
      pushes.push({ seq: Number(rest[i]), event: rest[i + 1]!, payload: rest[i + 2]! });
    return { kind: 'ok', position, pushes };
  }

  /** APPEND's ARGV: the push, the limits, a fresh epoch, the origin. */
  private appendArgs(event: string, payload: string, origin?: PushOrigin): (string | number)[] {
    const { limits } = this.deps;
    return [
      event,
      payload,
      limits.windowMs,
      limits.maxPushes,
      limits.positionTtlMs,
      this.deps.epoch(),
      origin?.source ?? '',
      origin?.epoch ?? 0,
      origin?.turn ?? 0,
      origin?.index ?? 0,
    ];
  }

  /** The recipients (streams) logically in a room. */
  roster(room: string): Promise<string[]> {
    return this.deps.redis.smembers(this.deps.keys.pushRoster(room));
  }

  async enroll(room: string, streams: string[]): Promise<void> {
    if (!streams.length) return;
    const key = this.deps.keys.pushRoster(room);
    // Issued together: one round trip (auto-pipelined), in this order on the key's connection.
    await Promise.all([
      this.deps.redis.sadd(key, ...streams),
      this.deps.redis.pexpire(key, this.deps.limits.positionTtlMs),
    ]);
  }

  async unenroll(room: string, streams: string[]): Promise<void> {
    if (streams.length) await this.deps.redis.srem(this.deps.keys.pushRoster(room), ...streams);
  }

  async dropRoster(room: string): Promise<void> {
    await this.deps.redis.del(this.deps.keys.pushRoster(room));
  }
}
