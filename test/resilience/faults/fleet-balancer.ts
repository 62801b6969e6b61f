import net from 'node:net';

/**
 * A TCP load balancer in front of the nodes that serve now, as a cluster's service address is: each new
 * connection goes to one of `backends()` (their base URLs), round robin; a connection whose node goes
 * away is closed both ways, so the client sees its transport close and reconnects through the balancer
 * to a node that is up. A restarted node listens on a new port, which `backends()` names from then on.
 *
 * `sticky`: every connection goes to the same node for as long as it serves (as a load balancer with
 * session affinity does): what HTTP long-polling needs, whose requests of one session must reach the
 * node that holds it. A sticky balancer per client stands for that client's route into the cluster.
 *
 * `cut(ms)` is a network loss on this route: open connections are dropped and new ones refused for `ms`.
 */
export class Balancer {
  private readonly server: net.Server;
  private readonly pairs = new Set<{ front: net.Socket; back: net.Socket; port: number }>();
  /** Every client-side socket still open (a pair whose node closed waits here for the client's end). */
  private readonly fronts = new Set<net.Socket>();
  private listening = 0;
  private next = 0;
  private stuck?: number;
  private cutUntil?: Promise<void>;
  /** Connections accepted, and refused (no node up, a cut, the node refused). */
  readonly counts = { accepted: 0, refused: 0 };

  constructor(
    private readonly backends: () => string[],
    private readonly sticky = false,
  ) {
    this.server = net.createServer((front) => this.accept(front));
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.listening = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  get port(): number {
    return this.listening;
  }

  /** The tenant's base address through this balancer (`*.localhost` resolves to loopback in the SDK). */
  url(tenant: string): string {
    return `http://${tenant}.localhost:${this.port}`;
  }

  /** Connections open through it now. */
  open(): number {
    return this.pairs.size;
  }

  private pick(): number | undefined {
    const ports = this.backends().map((u) => Number(new URL(u).port));
    if (!ports.length) return undefined;
    if (this.sticky) {
      if (this.stuck === undefined || !ports.includes(this.stuck)) this.stuck = ports[this.next++ % ports.length];
      return this.stuck;
    }
    return ports[this.next++ % ports.length];
  }

  private accept(front: net.Socket): void {
    this.fronts.add(front);
    front.once('close', () => this.fronts.delete(front));
    const port = this.cutUntil ? undefined : this.pick();
    if (port === undefined) {
      this.counts.refused++;
      front.destroy();
      return;
    }
    this.counts.accepted++;
    front.setNoDelay(true);
    const back = net.connect({ port, host: '127.0.0.1', noDelay: true });
    const pair = { front, back, port };
    this.pairs.add(pair);
    const drop = () => {
      this.pairs.delete(pair);
      front.destroy();
      back.destroy();
    };
    // An end goes through as an end (what the node sent before closing reaches the client, then its FIN);
    // a reset, as a reset.
    front.on('error', drop);
    back.on('error', drop);
    front.on('close', drop);
    back.on('close', () => {
      this.pairs.delete(pair);
      front.end();
    });
    front.pipe(back);
    back.pipe(front);
  }

  /** Drops the connections to backends no longer listed (a node that stopped or was killed closes them itself). */
  dropGone(): void {
    const live = new Set(this.backends().map((u) => Number(new URL(u).port)));
    for (const p of this.pairs) if (!live.has(p.port)) p.front.destroy();
  }

  /** A network loss of `ms`: every open connection dropped, new ones refused until it ends. */
  async cut(ms: number): Promise<void> {
    let end = () => undefined as void;
    this.cutUntil = new Promise<void>((r) => (end = r));
    for (const p of this.pairs) p.front.destroy();
    await new Promise((r) => setTimeout(r, ms));
    this.cutUntil = undefined;
    end();
  }

  async close(): Promise<void> {
    const closed = new Promise((r) => this.server.close(r));
    for (const p of this.pairs) p.back.destroy();
    for (const f of this.fronts) f.destroy();
    await closed;
  }
}
