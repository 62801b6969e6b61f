import {
  createRestClient,
  HubClient,
  Session,
  type HubMethodName,
  type RestClient,
} from '../../../packages/client/src/index.js';
import { loopbackFetch } from '../../../packages/client/src/localhost.js';
import { Balancer } from './fleet-balancer.js';
import { codeOf, type Ledger } from './fleet-ledger.js';
import type { PythonFleet } from './fleet-python.js';

export type FleetRole = 'clinician' | 'patient' | 'device';

/** A sign-in's tokens (the service's LoginResponse, or the SDK's). */
export type SignedIn = { accessToken: string; refreshToken?: string; expiresAt?: string };

/** How the clients keep their tokens: the tenant's access-token lifetime is short, so each refreshes several times. */
export interface Lifetimes {
  /** Refresh this long before the access token expires. */
  marginMs: number;
  /** Hand the live connection its fresh token this often (`refreshToken`; 0: never). */
  handOverEveryMs: number;
}

/** A permission each role needs for its part of the day: a refreshed token must still carry it. */
const NEEDED: Record<FleetRole, string> = { clinician: 'calls:make', patient: 'calls:make', device: 'devices:report' };

/**
 * One simulated client of the fleet: a phone (clinician or patient) or a headset, signed in with a
 * session it refreshes itself, connected to the hub through the cluster's address (a balancer). The day
 * drives it through `call` and listens with `on`; it counts its reconnections and resumptions.
 */
export abstract class Member {
  /** Call ids of every `onNewCall` it received, live or replayed. */
  readonly invites = new Set<string>();
  /** Connections lost and resumptions (`pushStreams` on a later connection). */
  disconnects = 0;
  resumes = 0;
  /** Sessions refreshed (REST) by this client. */
  refreshes = 0;
  protected downSince?: number;
  /** While a blip holds the network, the time it gives it back (resumption is measured from then). */
  protected backAt?: number;
  protected closing = false;
  private settledWaiters: (() => void)[] = [];
  private inviteWaiters = new Map<string, () => void>();
  private listeners = new Map<string, Set<(p: any) => void>>();
  session!: Session;
  api!: RestClient;
  /** The last `sessionEnded` it got, with when. */
  lastSessionEnded?: string;
  /** The last refusal of a (re)connection, with when. */
  lastRefusal?: string;
  /** The client's last connections, disconnections, resumptions and invites, with when: what a lost invite is told with. */
  readonly timeline: string[] = [];

  constructor(
    readonly name: string,
    readonly userId: string,
    readonly role: FleetRole,
    protected readonly ledger: Ledger,
  ) {}

  abstract readonly via: 'sdk' | 'python';
  abstract call<T = any>(method: HubMethodName, ...args: unknown[]): Promise<T>;
  /** A network loss of `ms` on this client's route: its transport drops and it cannot come back before. */
  abstract blip(ms: number): Promise<void>;
  abstract close(): Promise<void>;

  /** Connected and resumed (not waiting for a reconnection). */
  isUp(): boolean {
    return this.downSince === undefined && !this.closing;
  }

  /** Listens to a push (live or replayed); returns the function that stops listening. */
  on(event: string, fn: (p: any) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn);
    return () => void set.delete(fn);
  }

  /** Resolves once the client is connected and resumed. */
  settled(): Promise<void> {
    if (this.isUp()) return Promise.resolve();
    return new Promise((r) => this.settledWaiters.push(r));
  }

  /** Resolves once the invite `callId` reached this client. */
  received(callId: string): Promise<void> {
    if (this.invites.has(callId)) return Promise.resolve();
    return new Promise((r) => this.inviteWaiters.set(callId, r));
  }

  /** Signs the session in and keeps it fresh; after each refresh, uses the new token for something its role needs. */
  /** REST requests of this client still waiting for their answer (method, path, when sent). */
  readonly pending = new Set<string>();

  /** The SDK's own fetch for `*.localhost`, noting each request until it settles. */
  private readonly fetch = (input: Request | string | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const note = `${new Date().toISOString()} ${req.method} ${new URL(req.url).pathname}`;
    this.pending.add(note);
    return loopbackFetch(req).finally(() => this.pending.delete(note));
  };

  protected startSession(login: SignedIn, baseUrl: string, lifetimes: Lifetimes): RestClient {
    const refresher = createRestClient({ baseUrl, fetch: this.fetch });
    this.api = createRestClient({ baseUrl, token: () => this.session.token(), fetch: this.fetch });
    this.session = new Session(login, {
      onError: (e) => {
        this.ledger.refreshes.failed++;
        this.ledger.failed(this.name, 'refresh', e);
        if (this.ledger.refreshFailures.length < 20)
          this.ledger.refreshFailures.push(
            `${new Date().toISOString()} ${this.name}: ${codeOf(e)} ${(e as Error)?.message}`,
          );
      },
      onRefreshed: () => {
        this.refreshes++;
        this.ledger.refreshes.done++;
        void this.useRights();
        this.refreshed();
      },
    }).start(refresher, 600_000, lifetimes.marginMs);
    return refresher;
  }

  /** A fresh token was obtained (a python client hands it to its connection). */
  protected refreshed(): void {}

  /** A REST call that needs a permission every role has (profile:read): refused only if the token lost its rights. */
  private async useRights(): Promise<void> {
    try {
      await this.api.GET('/api/contacts/me');
      this.ledger.refreshes.checked++;
    } catch (e) {
      this.ledger.failed(this.name, 'GET /api/contacts/me', e);
    }
  }

  /** What a hand-over answered: the connection's rights now; without the role's own, a finding. */
  protected handedOver(r: { permissions?: string[] } | undefined, e?: unknown): void {
    if (e !== undefined) {
      this.ledger.handOvers.failed++;
      this.ledger.failed(this.name, 'refreshToken', e);
      return;
    }
    this.ledger.handOvers.done++;
    if (!r?.permissions?.includes(NEEDED[this.role])) {
      this.ledger.handOvers.withoutRights++;
      this.ledger.permissionRefusals.push(
        `${this.name} refreshToken: the connection holds ${JSON.stringify(r?.permissions)} without ${NEEDED[this.role]}`,
      );
    }
  }

  /** Notes a step of the client's connection in its timeline (the last 40 are kept). */
  mark(what: string): void {
    this.timeline.push(`${new Date().toISOString().slice(11)} ${what}`);
    if (this.timeline.length > 40) this.timeline.shift();
  }

  protected emitLocal(event: string, payload: any): void {
    if (event === 'onNewCall') {
      const callId = payload?.call?.callId as string;
      this.mark(`onNewCall ${callId} ${JSON.stringify(payload?.pos ?? null)}`);
      this.invites.add(callId);
      this.inviteWaiters.get(callId)?.();
      this.inviteWaiters.delete(callId);
    } else if (event === 'resyncRequired') this.ledger.resyncs.push(`${this.name}: ${payload?.stream}`);
    else if (event === 'sessionEnded') {
      const code = String(payload?.code);
      this.lastSessionEnded = `${new Date().toISOString()} ${code}`;
      this.ledger.sessionsEnded.set(code, (this.ledger.sessionsEnded.get(code) ?? 0) + 1);
    }
    for (const l of [...(this.listeners.get(event) ?? [])]) l(payload);
  }

  protected wentDown(): void {
    if (this.closing || this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.disconnects++;
  }

  /** A connection's `pushStreams`: resumed; the time since the connection was lost (or the network came back). */
  protected resumed(): void {
    if (this.downSince !== undefined) {
      const from = Math.max(this.downSince, this.backAt ?? 0);
      (this.backAt !== undefined ? this.ledger.resumeMsAfterBlip : this.ledger.resumeMs).push(Date.now() - from);
      this.resumes++;
    }
    this.downSince = undefined;
    this.backAt = undefined;
    for (const w of this.settledWaiters.splice(0)) w();
  }
}

/** A client of the project's SDK (packages/client): Session + HubClient, websocket, as the mobile apps are. */
export class SdkMember extends Member {
  readonly via = 'sdk' as const;
  hub!: HubClient;
  tokenAsks = 0;
  tokenPending = false;
  lastDisconnect?: string;
  private barrier: Promise<void> = Promise.resolve();
  /** The connection's last events (for a client that did not come back). */
  private readonly events: string[] = [];

  private note(what: string): void {
    this.events.push(`${new Date().toISOString().slice(11)} ${what}`);
    if (this.events.length > 12) this.events.shift();
    this.mark(what);
  }

  async start(login: SignedIn, baseUrl: string, lifetimes: Lifetimes): Promise<this> {
    const refresher = this.startSession(login, baseUrl, lifetimes);
    this.hub = new HubClient({
      url: baseUrl,
      // Every connection asks for its token: held during a blip (the network is gone), fresh otherwise.
      token: async () => {
        this.tokenAsks++;
        this.note('token asked');
        this.tokenPending = true;
        try {
          await this.barrier;
          return await this.session.freshToken(refresher, lifetimes.marginMs);
        } finally {
          this.tokenPending = false;
        }
      },
      refreshEveryMs: lifetimes.handOverEveryMs,
      onTokenRefreshed: (r) => this.handedOver(r),
      onRefreshError: (e) => this.handedOver(undefined, e),
      socket: { transports: ['websocket'], reconnectionDelay: 300, reconnectionDelayMax: 2_000 },
    });
    for (const event of [
      'onNewCall',
      'resyncRequired',
      'sessionEnded',
      'waitingRoom',
      'recordingConsentRequested',
      'recordingConsentResult',
    ])
      this.hub.on(event as 'onNewCall', (p) => this.emitLocal(event, p));
    this.hub.on('meetingEvent', (p) => this.emitLocal('meetingEvent', p));
    this.hub.on('waitingRoomUpdated', (p) => this.emitLocal('waitingRoomUpdated', p));
    this.hub.on('pushStreams', () => this.resumed());
    this.hub.socket.on('disconnect', (reason) => {
      this.lastDisconnect = `${new Date().toISOString()} ${reason}`;
      this.note(`disconnect ${reason}`);
      this.wentDown();
    });
    this.hub.socket.on('connect', () => this.note('connect'));
    this.hub.on('sessionEnded', (p) => this.note(`sessionEnded ${(p as { code?: string })?.code}`));
    for (const ev of ['open', 'close', 'error', 'reconnect_attempt', 'reconnect', 'reconnect_failed'] as const)
      this.hub.socket.io.on(ev as 'open', (...a: unknown[]) =>
        this.note(`io ${ev} ${a.map((x) => String(x)).join(' ')}`),
      );
    // Refused reconnections, by code (the SDK comes back by itself after some; a client left away is named at the end).
    this.hub.socket.on('connect_error', (err: Error & { data?: { code?: string } }) => {
      this.lastRefusal = `${new Date().toISOString()} ${err.data?.code ?? 'transport'}: ${err.message}`;
      this.ledger.count('connect', err.data?.code ?? `transport: ${err.message}`);
      this.note(`connect_error ${err.data?.code ?? err.message}`);
    });
    this.downSince = Date.now();
    const first = this.settled();
    await this.hub.connect();
    await first;
    return this;
  }

  /**
   * A hub method through the SDK; when the connection drops before the acknowledgement (which then never
   * comes), the call fails at once as `disconnected` rather than at the SDK's acknowledgement timeout.
   */
  async call<T = any>(method: HubMethodName, ...args: unknown[]): Promise<T> {
    const socket = this.hub.socket;
    if (!socket.connected) throw Object.assign(new Error(`${method}: not connected`), { code: 'disconnected' });
    let onDrop = () => undefined as void;
    const dropped = new Promise<never>((_, reject) => {
      onDrop = () => reject(Object.assign(new Error(`${method}: connection dropped`), { code: 'disconnected' }));
      socket.once('disconnect', onDrop);
    });
    try {
      return await Promise.race([
        (this.hub.call as unknown as (m: string, ...a: unknown[]) => Promise<T>).call(this.hub, method, ...args),
        dropped,
      ]);
    } finally {
      socket.off('disconnect', onDrop);
    }
  }

  async blip(ms: number): Promise<void> {
    if (!this.hub.socket.connected) return;
    let release = () => undefined as void;
    this.barrier = new Promise<void>((r) => (release = r));
    const gone = new Promise((r) => this.hub.socket.once('disconnect', r));
    this.hub.socket.io.engine.close();
    await gone;
    await new Promise((r) => setTimeout(r, ms));
    this.backAt = Date.now();
    release();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.session.stop();
    this.hub.close();
  }

  /** Where its connection stands (for a client that did not come back). */
  state(): string {
    const io = this.hub.socket.io as unknown as { _readyState?: string; _reconnecting?: boolean };
    return JSON.stringify({
      connected: this.hub.socket.connected,
      active: this.hub.socket.active,
      manager: io._readyState,
      reconnecting: io._reconnecting,
      tokenAsks: this.tokenAsks,
      tokenPending: this.tokenPending,
      lastDisconnect: this.lastDisconnect,
      lastRefusal: this.lastRefusal,
      lastSessionEnded: this.lastSessionEnded,
      backAt: this.backAt,
      downSince: this.downSince,
      refreshes: this.refreshes,
      pending: [...this.pending],
      events: this.events,
    });
  }
}

/** A python-socketio client (default transports, its own reconnection) in the fleet's python process. */
export class PythonMember extends Member {
  readonly via = 'python' as const;
  private route!: Balancer;
  private fleet!: PythonFleet;
  private c = -1;

  async start(
    login: SignedIn,
    baseUrl: string,
    lifetimes: Lifetimes,
    fleet: PythonFleet,
    route: Balancer,
  ): Promise<this> {
    this.startSession(login, baseUrl, lifetimes);
    this.fleet = fleet;
    this.route = route;
    this.downSince = Date.now();
    const first = this.settled();
    this.c = fleet.open(route.url('acme'), this.session.token(), (line) => this.line(line));
    await first;
    return this;
  }

  protected override refreshed(): void {
    this.fleet.token(this.c, this.session.token());
  }

  private line(l: Record<string, any>): void {
    if (l.event === 'connected') this.mark(`connected ${l.transport} resume ${JSON.stringify(l.resume ?? null)}`);
    else if (l.event === 'connect_error') this.mark(`connect_error ${JSON.stringify(l.data)}`);
    else if (l.event === 'gap') this.mark(`resume asked for a gap from ${JSON.stringify(l.positions)}`);
    if (l.event === 'disconnected') {
      this.mark(`disconnected ${l.reason}`);
      this.wentDown();
    } else if (l.event === 'wedged') {
      // The library's own state, not the service's (fleet_clients.py): counted, told, and come back from.
      this.mark(`library wedged ${JSON.stringify(l.state)}, connecting again`);
      this.ledger.pythonWedges.push(`${new Date().toISOString().slice(11)} ${this.name}`);
      this.wentDown();
    } else if (l.event === 'push') {
      if (l.name === 'pushStreams') {
        this.mark(`pushStreams ${JSON.stringify(l.data?.positions ?? null)}`);
        this.resumed();
      } else if (l.name === 'resyncRequired') this.mark(`resyncRequired ${JSON.stringify(l.data)}`);
      else this.emitLocal(l.name, l.data);
    } else if (l.event === 'refreshed') {
      if (l.result?.ok) this.handedOver(l.result.data);
      else this.handedOver(undefined, l.result?.error ?? { code: 'malformed_ack' });
    }
  }

  async call<T = any>(method: HubMethodName, ...args: unknown[]): Promise<T> {
    const r = await this.fleet.call(this.c, method, args);
    if (r?.ok) return r.data as T;
    throw Object.assign(new Error(`${method}: ${r?.error?.message ?? JSON.stringify(r)}`), {
      code: r?.error?.code ?? 'malformed_ack',
    });
  }

  async blip(ms: number): Promise<void> {
    if (!this.isUp()) return;
    this.mark(`blip ${ms} ms`);
    await this.route.cut(ms);
    this.backAt = Date.now();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.session.stop();
    await this.fleet.close(this.c);
  }
}

export { codeOf };
