import type { ServerToClientEvents } from './generated/hub-types.js';

/** A recoverable push's place in its recipient's history (docs/hub.md#recovering-missed-pushes). */
export type PushPosition = Parameters<ServerToClientEvents['pushStreams']>[0]['positions'][number];

interface StreamState {
  position: PushPosition;
  /** Pushes that arrived ahead of a gap, by seq. */
  held: Map<number, { event: string; payload: unknown }>;
}

/**
 * The client side of recoverable pushes: the last position of each stream (handed over at every
 * reconnection), and in-order, once-only delivery. A push whose `seq` was delivered already is dropped
 * (replayed and live both); one that leaves a gap is held until the gap fills (`gaps()` names the
 * streams to `resume`); `pushStreams` and `resyncRequired` set where a stream continues from.
 */
export class PushStreams {
  private readonly streams = new Map<string, StreamState>();

  /** The positions to hand over at a (re)connection (`auth.resume`). */
  positions(): PushPosition[] {
    return [...this.streams.values()].map((s) => ({ ...s.position }));
  }

  /** `pushStreams` / `resyncRequired`: the stream continues from `p`; what was held before it goes. */
  reset(p: PushPosition): { event: string; payload: unknown }[] {
    const cur = this.streams.get(p.stream);
    const held = cur && cur.position.epoch === p.epoch ? cur.held : new Map();
    const s: StreamState = { position: { ...p }, held };
    if (cur && cur.position.epoch === p.epoch && cur.position.seq > p.seq) s.position.seq = cur.position.seq;
    this.streams.set(p.stream, s);
    for (const seq of [...held.keys()]) if (seq <= s.position.seq) held.delete(seq);
    return this.drain(s);
  }

  /**
   * A push with a position: what to deliver now, in order (nothing for a duplicate or a push ahead of
   * a gap; the push and the held ones after it when it fills the gap).
   */
  accept(event: string, payload: { pos: PushPosition }): { event: string; payload: unknown }[] {
    const p = payload.pos;
    const s = this.streams.get(p.stream);
    if (!s || s.position.epoch !== p.epoch) {
      // A stream this client has no position of (its first push), or a new epoch without a notice.
      this.streams.set(p.stream, { position: { ...p }, held: new Map() });
      return [{ event, payload }];
    }
    if (p.seq <= s.position.seq) return [];
    s.held.set(p.seq, { event, payload });
    return this.drain(s);
  }

  /** Streams with pushes held behind a gap, and the position to resume them from. */
  gaps(): PushPosition[] {
    return [...this.streams.values()].filter((s) => s.held.size > 0).map((s) => ({ ...s.position }));
  }

  private drain(s: StreamState): { event: string; payload: unknown }[] {
    const out: { event: string; payload: unknown }[] = [];
    for (let next = s.held.get(s.position.seq + 1); next; next = s.held.get(s.position.seq + 1)) {
      s.held.delete(s.position.seq + 1);
      s.position.seq += 1;
      out.push(next);
    }
    return out;
  }
}
