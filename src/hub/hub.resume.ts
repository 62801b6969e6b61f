import { z } from 'zod';
import { AppError } from '../kernel/errors.js';
import type { HistoryRead, StreamPosition } from '../data/stores/push-history.store.js';
import type { PushName, PushPosition } from '../contracts/pushes.js';
import { streams } from '../realtime/rooms.js';
import type { HubContext, HubSocket, HubStreams } from './hub.types.js';

export const PositionSchema = z
  .object({
    stream: z.string().min(3).max(64),
    epoch: z.string().min(1).max(32).optional(),
    seq: z.number().int().min(0).optional(),
  })
  .strict();

/** At most a user's stream and a device's, with room to spare; more is refused. */
export const PositionsSchema = z.array(PositionSchema).max(4);

type Given = z.infer<typeof PositionSchema>;

const RESYNC_MESSAGE =
  'Some pushes since your last position can no longer be replayed: resynchronise (getMeetingDetails and its seq, your calls and waiting rooms) and continue from this position';

/** The positions a handshake hands over (`auth.resume`); anything malformed counts as none. */
export function handshakePositions(socket: HubSocket): Given[] {
  const raw = (socket.handshake.auth as { resume?: unknown } | undefined)?.resume;
  const parsed = PositionsSchema.safeParse(raw ?? []);
  return parsed.success ? parsed.data : [];
}

function from(given?: Given): StreamPosition | undefined {
  return given?.epoch !== undefined && given.seq !== undefined ? { epoch: given.epoch, seq: given.seq } : undefined;
}

function resync(socket: HubSocket, stream: string, position: StreamPosition): void {
  socket.emit('resyncRequired', {
    code: 'resync_required',
    message: RESYNC_MESSAGE,
    stream,
    position: { stream, ...position },
  });
}

/** Sends a read's pushes to the socket, each with its position; a read that fell short is a resyncRequired. */
function replay(socket: HubSocket, stream: string, read: HistoryRead): { position: StreamPosition; replayed: number } {
  if (read.kind === 'resync') {
    resync(socket, stream, read.position);
    return { position: read.position, replayed: 0 };
  }
  if (read.kind === 'current') return { position: read.position, replayed: 0 };
  for (const p of read.pushes) {
    const payload = { ...(JSON.parse(p.payload) as object), pos: { stream, epoch: read.position.epoch, seq: p.seq } };
    (socket.emit as (ev: string, payload: unknown) => boolean)(p.event as PushName, payload);
  }
  return { position: read.position, replayed: read.pushes.length };
}

/** A connection's reads of its stream are tried this many times (100 ms, then 200 ms apart) before it is closed. */
export const CONNECT_READS = 3;

/**
 * A read of the connection's stream, tried again after a failure; undefined when every try failed or the
 * socket went away meanwhile. After the last failure the connection's transport is closed: joined
 * without its position, it would miss what was sent while it was away without knowing, so the client
 * comes back instead (socket.io clients reconnect after a transport close) and hands its position over
 * again.
 */
async function readAtConnection(
  ctx: Pick<HubContext, 'logger'>,
  socket: HubSocket,
  read: () => Promise<HistoryRead>,
): Promise<HistoryRead | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (socket.disconnected) return undefined;
      if (attempt < CONNECT_READS) {
        await new Promise((r) => setTimeout(r, 100 * attempt));
        if (socket.disconnected) return undefined;
        continue;
      }
      ctx.logger.warn(
        { component: 'hub', code: 'service_unavailable', err: (err as Error).message },
        'push history unavailable at connection',
      );
      socket.conn.close();
      return undefined;
    }
  }
}

/**
 * A new connection: where its user's stream continues from (the position the client handed over, or the
 * current one, or the current one after a `resyncRequired`) is sent first (`pushStreams`); then the socket
 * joins its rooms and, once this node receives their pushes, gets every push recorded after that
 * position. A push recorded before the read is replayed; one recorded after it reaches the joined socket
 * live; one in between may come both ways, and its position tells the client it has it already. A stream
 * that cannot be read (after CONNECT_READS tries) closes the connection's transport: the client comes
 * back with its position.
 */
export async function openStreams(
  ctx: Pick<HubContext, 'logger'>,
  hub: HubStreams,
  socket: HubSocket,
  join: () => Promise<void>,
  /** The first read, when startFirstRead began it during the handshake (its first try). */
  early?: Promise<HistoryRead>,
): Promise<void> {
  const { tenant, principal } = socket.data;
  const stream = streams.user(principal.userId);
  const given = from(handshakePositions(socket).find((p) => p.stream === stream));
  let started = early;
  const first = await readAtConnection(ctx, socket, () => {
    const read = started ?? hub.history.read(tenant, stream, given, true);
    started = undefined;
    return read;
  });
  if (!first) return;
  if (first.kind === 'resync') resync(socket, stream, first.position);
  const start = first.kind === 'ok' && given ? given : first.position;
  socket.emit('pushStreams', { positions: [{ stream, ...start }] });
  await join();
  if (socket.disconnected) return;
  const missed = await readAtConnection(ctx, socket, () => hub.history.read(tenant, stream, start));
  if (missed) replay(socket, stream, missed);
}

/**
 * The first read of openStreams (where the user's stream continues from), begun while the handshake's
 * other work (presence, the directory's rooms) is under way, so the connection's `pushStreams` does not
 * wait for Redis once more after the client is told it is connected. Reading earlier only widens the span
 * the read after the join covers. A failure is openStreams' to handle (it tries again).
 */
export function startFirstRead(hub: HubStreams, socket: HubSocket): Promise<HistoryRead> {
  const { tenant, principal } = socket.data;
  const stream = streams.user(principal.userId);
  const read = hub.history.read(
    tenant,
    stream,
    from(handshakePositions(socket).find((p) => p.stream === stream)),
    true,
  );
  read.catch(() => undefined);
  return read;
}

/**
 * `resume`: replays the pushes of the socket's streams after the positions given (a stream without
 * epoch and seq: its current position), after which the ack tells where each continues from. Only the
 * socket's own streams: its user's, and its device's once it identified as one (initRapidConnect).
 */
export async function resumeStreams(
  hub: HubStreams | undefined,
  socket: HubSocket,
  positions: Given[],
): Promise<{ positions: PushPosition[]; replayed: number }> {
  if (!hub) throw new AppError('service_unavailable', 'This node keeps no push histories');
  const { tenant, principal } = socket.data;
  const own = [streams.user(principal.userId), ...(socket.data.deviceId ? [streams.device(socket.data.deviceId)] : [])];
  for (const p of positions)
    if (!own.includes(p.stream)) throw new AppError('forbidden', `Stream ${p.stream} is not this connection's`);
  const out: PushPosition[] = [];
  let replayed = 0;
  for (const p of positions) {
    const room = streams.room(tenant, p.stream)!;
    await hub.subscribed([room]);
    const r = replay(socket, p.stream, await hub.history.read(tenant, p.stream, from(p)));
    out.push({ stream: p.stream, ...r.position });
    replayed += r.replayed;
  }
  return { positions: out, replayed };
}

/**
 * A recipient entered meeting rooms: it goes on their rosters, so their recoverable pushes are recorded in
 * its history from now on, connected or not, until it is removed or the meeting ends. A roster that could
 * not be written is logged: the socket still joins and gets the room's pushes live (without positions).
 */
export async function enroll(ctx: HubContext, socket: HubSocket, stream: string, list: string[]): Promise<void> {
  if (!ctx.streams) return;
  try {
    await ctx.streams.history.enroll(socket.data.tenant, stream, list);
  } catch (err) {
    ctx.logger.warn(
      { component: 'hub', code: 'service_unavailable', err: (err as Error).message },
      'meeting roster not written',
    );
  }
}
