import type { PushPosition } from '../../src/contracts/pushes.js';
import { hubClient, type HubClient, type HubTransport } from './hub-client.js';

/**
 * What a resuming client keeps between connections, written against the bare socket.io client: the last
 * position of each stream (from every push's `pos`, `pushStreams` and `resyncRequired`), handed over as
 * `auth.resume` at each (re)connection; and every push received, in order, with the connection it came on.
 */
export class Positions {
  readonly last = new Map<string, PushPosition>();
  readonly received: { event: string; payload: any; connection: number }[] = [];
  private connections = 0;
  private readonly waiters: { match: (e: string, p: any) => boolean; resolve: (p: any) => void }[] = [];

  constructor(private readonly token: string) {}

  private note(p: PushPosition): void {
    const cur = this.last.get(p.stream);
    if (!cur || cur.epoch !== p.epoch || p.seq > cur.seq) this.last.set(p.stream, { ...p });
  }

  /** A socket of this client on the node at `url` (not connected yet: call `open`). */
  socket(url: string, transport: HubTransport): HubClient {
    const s = hubClient(url, 'acme', { transport });
    s.auth = (cb: (data: object) => void) => cb({ token: this.token, resume: [...this.last.values()] });
    s.on('connect', () => (this.connections += 1));
    s.onAny((event: string, payload: any) => {
      if (event === 'pushStreams') for (const p of payload.positions) this.last.set(p.stream, { ...p });
      else if (event === 'resyncRequired') this.last.set(payload.stream, { ...payload.position });
      else if (payload?.pos) this.note(payload.pos);
      this.received.push({ event, payload, connection: this.connections });
      for (const w of [...this.waiters])
        if (w.match(event, payload)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(payload);
        }
    });
    return s;
  }

  /** Connects `s` and resolves once its connection's `pushStreams` arrived. */
  async open(s: HubClient): Promise<HubClient> {
    const streams = this.next('pushStreams', () => true, this.received.length);
    s.connect();
    await streams;
    return s;
  }

  /** The first push (received at index `from` or later) of `event` that matches. */
  next(event: string, match: (p: any) => boolean = () => true, from = 0): Promise<any> {
    const hit = this.received.slice(from).find((r) => r.event === event && match(r.payload));
    if (hit) return Promise.resolve(hit.payload);
    return new Promise((resolve) => this.waiters.push({ match: (e, p) => e === event && match(p), resolve }));
  }

  /** Pushes received on the `n`th connection (1-based), as `event` or `event:type|state`. */
  on(n: number): string[] {
    return this.received
      .filter((r) => r.connection === n && r.event !== 'userStatus')
      .map((r) => r.event + (r.payload?.type ? `:${r.payload.type}` : r.payload?.state ? `:${r.payload.state}` : ''));
  }
}

/** Drops the client's transport (as a network loss does) and resolves once the socket saw it go. */
export async function dropTransport(s: HubClient): Promise<void> {
  const gone = new Promise((r) => s.once('disconnect', r));
  s.io.engine.close();
  await gone;
}
