import { io, type ManagerOptions, type Socket, type SocketOptions } from 'socket.io-client';
import type {
  AckResult,
  ClientToServerEvents,
  HubMethodName,
  ServerEventName,
  ServerToClientEvents,
} from './generated/hub-types.js';
import { ConsultError, type ErrorCode } from './errors.js';
import type { RetryableCode } from './generated/hub-types.js';
import { inNode, isLoopbackName, loopbackAgents } from './localhost.js';
import { PushStreams } from './push-streams.js';

export type { ClientToServerEvents, ServerToClientEvents, HubMethodName, ServerEventName };

/** Arguments of a hub method, without the acknowledgement callback (from the server's own event map). */
export type HubArgs<M extends HubMethodName> =
  Parameters<ClientToServerEvents[M]> extends [...infer A, (r: AckResult<any>) => void] ? A : never;
/** What a hub method's positive acknowledgement carries. */
export type HubResult<M extends HubMethodName> =
  Parameters<ClientToServerEvents[M]> extends [...unknown[], (r: AckResult<infer T>) => void] ? T : never;
/** Payload of a pushed message. */
export type HubPush<E extends ServerEventName> = Parameters<ServerToClientEvents[E]>[0];

export interface HubClientOptions {
  /**
   * The tenant's base address, e.g. `https://acme.consult.example` (the hub lives at /hubs/mobile); a
   * `*.localhost` address is connected to loopback by the client itself in Node.js, as browsers do.
   */
  url: string;
  /** The current access token: asked on every (re)connection and every `refreshEveryMs`. */
  token: () => string | Promise<string>;
  /** How often a live connection is handed a fresh token (`refreshToken`); the web client's cadence is about 40 s. 0: never. */
  refreshEveryMs?: number;
  /** Called after each periodic hand-over with what the server now holds (role, permissions, expiry). */
  onTokenRefreshed?: (result: HubResult<'refreshToken'>) => void;
  /** Called when a periodic hand-over is refused (a ConsultError, e.g. `token_expired`): the connection keeps its old token until it expires. */
  onRefreshError?: (error: unknown) => void;
  /** How long a method waits for its acknowledgement. */
  ackTimeoutMs?: number;
  /** How long a push may wait behind a gap in its stream before the client asks the hub to `resume` it. */
  gapResumeMs?: number;
  /** Passed to socket.io-client (transports, extraHeaders, reconnection settings, ...). */
  socket?: Partial<ManagerOptions & SocketOptions>;
}

/**
 * The realtime hub over socket.io-client, typed from the server's event maps: `call()` takes each
 * method's arguments and resolves with its acknowledgement data, or throws a ConsultError with the
 * coded error; `on()`/`next()` receive pushed messages. The connection lives the day:
 * - it keeps itself signed in (`refreshToken` every ~40 s with the token `token()` returns; give it
 *   `session.freshToken` so that token is refreshed before it expires);
 * - it reconnects by itself after a transport close, and after `sessionEnded { code: 'token_expired' }`
 *   or a `token_expired` refusal with a fresh token from `token()`;
 * - it resumes pushes from its last positions (docs/hub.md#recovering-missed-pushes): recoverable pushes
 *   reach `on()` in order and once, across reconnections; `resyncRequired` says when that was not possible;
 * - after a reconnection it joins the meetings, rooms and headset session it had joined again.
 */
/** The codes a rejoin tries again (every `retry: 'again'` code: the compiler holds the list to the service's). */
const REJOIN_RETRIED: Record<RetryableCode, true> = {
  not_owner: true,
  audit_busy: true,
  service_unavailable: true,
  timeout: true,
};
/** Tries of one join after a reconnection (the first and four more). */
const REJOIN_TRIES = 5;

export class HubClient {
  readonly socket: Socket<ServerToClientEvents, ClientToServerEvents>;
  /** Positions of the connection's push streams, kept across reconnections. */
  readonly streams = new PushStreams();
  private readonly meetings = new Set<string>();
  private readonly rooms = new Set<string>();
  private rapidConnect: [string, string] | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private gapTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly rejoined: Array<(errors: ConsultError[]) => void> = [];
  private readonly listeners = new Map<string, Set<(payload: unknown) => void>>();
  private connections = 0;
  private expiredRetries = 0;
  private closed = false;
  /**
   * Calls waiting for their acknowledgement (how each fails, its method): each settles once, by its ack,
   * its timeout, the loss of the connection it went out on, or close().
   */
  private readonly inFlight = new Map<(e: ConsultError) => void, string>();
  private endedExpired = false;

  constructor(private readonly opts: HubClientOptions) {
    this.socket = io(opts.url, {
      path: '/hubs/mobile',
      autoConnect: false,
      // The token is asked for each attempt's transport; one that comes after that transport closed is
      // not sent on the next (the next asked its own): two CONNECT packets on one transport make two
      // sockets on the server, and the second one's end later ended the reconnection the first began.
      auth: (cb) => {
        const engine = this.socket.io.engine;
        const send = (data: { token?: string; resume: unknown }) => {
          if (this.socket.io.engine === engine && !this.socket.connected) cb(data);
        };
        void Promise.resolve(opts.token()).then(
          (token) => send({ token, resume: this.streams.positions() }),
          () => send({ resume: this.streams.positions() }),
        );
      },
      ...opts.socket,
    });
    this.socket.onAny((event: string, payload: unknown) => this.dispatch(event, payload));
    this.socket.on('connect', () => {
      this.expiredRetries = 0;
      this.connections += 1;
      if (this.connections > 1) void this.rejoin();
    });
    this.socket.on('disconnect', (reason) => {
      // A call that went out on the lost connection is never acknowledged (an acknowledgement belongs to
      // its connection, and a resumed session replays pushes, not acknowledgements): it fails now, where it
      // would wait out its timeout (decision 1167). Every call waiting here went out on it: Socket.IO
      // buffers a call only while disconnected, and sends the buffer when the next connection opens.
      for (const [fail, method] of [...this.inFlight])
        fail(
          new ConsultError(
            'service_unavailable',
            `${method}: the connection closed before the acknowledgement (the call may have run)`,
            { method },
          ),
        );
      // The server ended the session at the token's expiry: come back with a fresh token.
      if (reason === 'io server disconnect' && this.endedExpired && !this.closed) {
        this.endedExpired = false;
        this.socket.connect();
      }
    });
    this.socket.on('connect_error', (err: Error & { data?: { code?: ErrorCode } }) => {
      // A reconnection refused for an expired token: ask `token()` again (a few times, not forever).
      if (this.connections > 0 && !this.closed && err.data?.code === 'token_expired' && this.expiredRetries < 3) {
        this.expiredRetries += 1;
        this.socket.connect();
      }
    });
  }

  /** Connects (once); rejects with the handshake's coded error (e.g. `token_invalid`, `tenant_not_found`). */
  async connect(): Promise<this> {
    if (this.socket.connected) return this;
    const url = new URL(this.opts.url);
    if (inNode() && isLoopbackName(url.hostname) && this.socket.io.opts.agent === undefined) {
      const { agents } = await loopbackAgents();
      const secure = url.protocol === 'https:' || url.protocol === 'wss:';
      this.socket.io.opts.agent = agents[secure ? 'https:' : 'http:'] as never;
    }
    return new Promise((resolve, reject) => {
      const ok = () => {
        this.socket.off('connect_error', bad);
        this.startRefresh();
        resolve(this);
      };
      const bad = (err: Error & { data?: { code?: ErrorCode; message?: string; retryAfter?: number } }) => {
        this.socket.off('connect', ok);
        this.socket.disconnect();
        reject(
          new ConsultError(
            err.data?.code ?? 'service_unavailable',
            err.data?.message ?? err.message,
            err.data?.retryAfter ? { retryAfter: err.data.retryAfter } : {},
          ),
        );
      };
      this.socket.once('connect', ok);
      this.socket.once('connect_error', bad);
      this.socket.connect();
    });
  }

  /** Calls a hub method and resolves with its acknowledgement data; a negative ack is thrown as ConsultError. */
  async call<M extends HubMethodName>(method: M, ...args: HubArgs<M>): Promise<HubResult<M>> {
    const timeoutMs = this.opts.ackTimeoutMs ?? 15_000;
    const r = await new Promise<AckResult<HubResult<M>>>((resolve, reject) => {
      if (this.closed) {
        reject(new ConsultError('service_unavailable', `${method}: the client is closed`, { method }));
        return;
      }
      // Set when the call waits in Socket.IO's buffer for the connection to come back.
      let buffered: (typeof this.socket.sendBuffer)[number] | undefined;
      const fail = (e: ConsultError) => {
        if (!this.inFlight.delete(fail)) return;
        clearTimeout(timer);
        // A call still waiting for the connection is not sent after its caller was told it failed.
        const i = buffered ? this.socket.sendBuffer.indexOf(buffered) : -1;
        if (i >= 0) this.socket.sendBuffer.splice(i, 1);
        reject(e);
      };
      const timer = setTimeout(
        () => fail(new ConsultError('timeout', `${method}: no acknowledgement within ${timeoutMs} ms`, { method })),
        timeoutMs,
      );
      this.inFlight.set(fail, method);
      const before = this.socket.sendBuffer.length;
      (this.socket.emit as unknown as (ev: string, ...a: unknown[]) => void)(
        method,
        ...args,
        (res: AckResult<HubResult<M>>) => {
          if (!this.inFlight.delete(fail)) return;
          clearTimeout(timer);
          resolve(res);
        },
      );
      if (this.socket.sendBuffer.length > before) buffered = this.socket.sendBuffer[this.socket.sendBuffer.length - 1];
    });
    if (!r.ok)
      throw new ConsultError(r.error.code, r.error.message, {
        method,
        ...(r.error.errors ? { errors: r.error.errors } : {}),
        ...(r.error.retryAfter ? { retryAfter: r.error.retryAfter } : {}),
      });
    this.remember(method, args);
    return r.data;
  }

  /**
   * Listens to a pushed message; returns the function that stops listening. Recoverable pushes arrive
   * in their stream's order and once, replayed ones included; `resyncRequired` and `sessionEnded` are
   * pushes like the others.
   */
  on<E extends ServerEventName>(event: E, listener: (payload: HubPush<E>) => void): () => void {
    const l = listener as (payload: unknown) => void;
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(l);
    return () => void set.delete(l);
  }

  /** The next push of `event` that matches `filter` (rejects after `timeoutMs`). */
  next<E extends ServerEventName>(
    event: E,
    filter: (payload: HubPush<E>) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<HubPush<E>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new ConsultError('timeout', `no '${event}' push within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.on(event, (p) => {
        if (!filter(p)) return;
        clearTimeout(timer);
        off();
        resolve(p);
      });
    });
  }

  /** Resolves after the next reconnection once meetings and rooms were joined again (with what failed). */
  whenRejoined(): Promise<ConsultError[]> {
    return new Promise((resolve) => this.rejoined.push(resolve));
  }

  /** Hands the connection the current token now (also done every `refreshEveryMs`). */
  async refreshToken(): Promise<HubResult<'refreshToken'>> {
    return this.call('refreshToken', await this.opts.token());
  }

  /**
   * Stops the client: pending calls fail at once with `service_unavailable` (their timers end with them,
   * so nothing of the client keeps a process alive), pushes stop.
   */
  close(): void {
    this.closed = true;
    for (const fail of [...this.inFlight.keys()])
      fail(new ConsultError('service_unavailable', 'the client was closed before the acknowledgement'));
    if (this.timer) clearInterval(this.timer);
    if (this.gapTimer) clearTimeout(this.gapTimer);
    this.timer = undefined;
    this.socket.disconnect();
  }

  private emitLocal(event: string, payload: unknown): void {
    for (const l of [...(this.listeners.get(event) ?? [])]) l(payload);
  }

  /** Every push passes here: positions are tracked, duplicates dropped, pushes behind a gap held. */
  private dispatch(event: string, payload: unknown): void {
    const p = payload as
      | { pos?: { stream: string; epoch: string; seq: number } }
      | { positions?: { stream: string; epoch: string; seq: number }[] }
      | { code?: string; position?: { stream: string; epoch: string; seq: number } }
      | undefined;
    let deliver: { event: string; payload: unknown }[];
    if (event === 'pushStreams' && p && 'positions' in p && p.positions)
      deliver = [...p.positions.flatMap((q) => this.streams.reset(q)), { event, payload }];
    else if (event === 'resyncRequired' && p && 'position' in p && p.position)
      deliver = [...this.streams.reset(p.position), { event, payload }];
    else if (p && 'pos' in p && p.pos)
      deliver = this.streams.accept(event, p as { pos: { stream: string; epoch: string; seq: number } });
    else deliver = [{ event, payload }];
    if (event === 'sessionEnded') this.endedExpired = (p as { code?: string })?.code === 'token_expired';
    for (const d of deliver) this.emitLocal(d.event, d.payload);
    this.watchGaps();
  }

  /** Pushes held behind a gap for `gapResumeMs`: ask the hub to replay the stream from the gap. */
  private watchGaps(): void {
    if (this.gapTimer || !this.streams.gaps().length) return;
    this.gapTimer = setTimeout(() => {
      this.gapTimer = undefined;
      const gaps = this.streams.gaps();
      if (gaps.length && this.socket.connected)
        this.call('resume', gaps).then(
          () => this.watchGaps(),
          () => this.watchGaps(),
        );
    }, this.opts.gapResumeMs ?? 1_000);
    (this.gapTimer as { unref?: () => void }).unref?.();
  }

  private startRefresh(): void {
    const every = this.opts.refreshEveryMs ?? 40_000;
    if (this.timer || every <= 0) return;
    this.timer = setInterval(() => {
      if (this.socket.connected)
        this.refreshToken().then(
          (r) => this.opts.onTokenRefreshed?.(r),
          (e: unknown) => this.opts.onRefreshError?.(e),
        );
    }, every);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private remember(method: HubMethodName, args: unknown[]): void {
    if (method === 'initEvent' || method === 'joinEvent') this.meetings.add((args[0] as { eventId: string }).eventId);
    else if (method === 'joinRoom') this.rooms.add(args[0] as string);
    else if (method === 'initRapidConnect') this.rapidConnect = [args[0] as string, args[1] as string];
  }

  /**
   * After a reconnection the server knows a new socket: join what the old one had joined. A join refused
   * for a reason that passes (the service's `retry: 'again'` codes: a meeting moving to another node after
   * one failed, a node too busy to answer in time) is tried again, 0.5, 1, 2 and 4 s later, while this
   * connection lasts; a later connection joins everything again itself. What still failed is handed to
   * `whenRejoined()`.
   */
  private async rejoin(): Promise<void> {
    const connection = this.connections;
    const current = () => this.connections === connection && this.socket.connected && !this.closed;
    const errors: ConsultError[] = [];
    const attempt = async (call: () => Promise<unknown>) => {
      for (let tried = 1; ; tried++) {
        try {
          await call();
          return;
        } catch (e) {
          const err = e as ConsultError;
          if (!(err.code in REJOIN_RETRIED) || tried >= REJOIN_TRIES || !current()) return void errors.push(err);
          await new Promise<void>((r) => (setTimeout(r, 250 * 2 ** tried) as { unref?: () => void }).unref?.());
          if (!current()) return void errors.push(err);
        }
      }
    };
    if (this.rapidConnect) {
      const [deviceId, code] = this.rapidConnect;
      await attempt(() => this.call('initRapidConnect', deviceId, code));
    }
    for (const eventId of this.meetings) await attempt(() => this.call('joinEvent', { eventId }));
    for (const roomId of this.rooms) await attempt(() => this.call('joinRoom', roomId));
    for (const done of this.rejoined.splice(0)) done(errors);
  }
}
