import type { Server as HttpServer, IncomingMessage } from 'node:http';
import { Server, type ServerOptions } from 'socket.io';
import type { CorsOptionsDelegate } from 'cors';
import { createShardedAdapter } from '@socket.io/redis-adapter';
import type { Infra } from '../app/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { handshake, type HandshakeDeps } from './handshake.js';
import { openStreams, startFirstRead } from './hub.resume.js';
import { engineAdmission, prepaidHandshakes, type AdmitSession } from './engine-admission.js';
import { coalesceWrites } from './write-coalescing.js';
import { methodDispatcher, methodTable, serveMethods, type HubMethod } from './method.js';
import { rooms } from '../realtime/rooms.js';
import { SocketRateLimit, type RateLimitOptions } from './socket-rate-limit.js';
import type { HubPresence } from './hub.presence.js';
import type { HubContext, HubServer, HubSocket } from './hub.types.js';

/** A connection to the configured Redis (one server or a cluster), from infra's connectRedis. */
type RedisConnection = Infra['redis'];

/** The path existing mobile and headset clients connect to (SPEC). */
export const HUB_PATH = '/hubs/mobile';

export interface HubServerDeps {
  server: HttpServer;
  pubClient: RedisConnection;
  subClient: RedisConnection;
  channelPrefix: string;
  handshake: HandshakeDeps;
  logger: Logger;
  metrics: Metrics;
  /** The HTTP API's cross-origin policy (src/http/middleware/cors.ts), for the long-polling transport. */
  cors: CorsOptionsDelegate<IncomingMessage>;
  /** Counts each new engine.io session against its address (RATE_LIMIT_HUB_SESSIONS_PER_IP). */
  admitSession?: AdmitSession;
}

/**
 * Socket.IO on the node's HTTP server with the sharded Redis adapter (docs/decisions/310): rooms are
 * addressed across every hub node, each room on its own sharded channel.
 */
export function createHubServer(deps: HubServerDeps): HubServer {
  const io: HubServer = new Server(deps.server, {
    path: HUB_PATH,
    serveClient: false,
    // The same origins as the HTTP API: none unless the deployment or the tenant lists them.
    cors: deps.cors as ServerOptions['cors'],
    maxHttpBufferSize: 256 * 1024,
    pingInterval: 20_000,
    pingTimeout: 20_000,
    adapter: createShardedAdapter(deps.pubClient, deps.subClient, {
      channelPrefix: deps.channelPrefix,
      subscriptionMode: 'dynamic',
    }),
  });
  // New engine.io sessions are limited per address before engine.io allocates them: a session costs
  // memory until its ping times out even if no Socket.IO connect (and so no handshake) ever follows.
  // With both limits, the handshake's count starts beside its session's (one wait for Redis, not two).
  const prepaid = deps.admitSession && deps.handshake.admit ? prepaidHandshakes(deps.handshake.admit) : undefined;
  if (deps.admitSession) io.engine.use(engineAdmission(deps.admitSession, deps.logger, prepaid?.start));
  // A connection's frames of one event-loop turn leave in one write (decision 1134).
  coalesceWrites(io.engine);
  io.use(handshake(prepaid ? { ...deps.handshake, admit: prepaid.admit } : deps.handshake));
  return io;
}

/**
 * Handles each authenticated socket: its rooms (user, tenant, session), presence, and every client
 * method bound with rate limit, permission check, validation and ack.
 */
export function onConnections(
  io: HubServer,
  ctx: HubContext,
  methods: HubMethod[],
  presence: HubPresence,
  rate: RateLimitOptions,
  metrics: Metrics,
  /** Whether a socket's caller is a configured proxy address itself (its calls' traceparent counts). */
  traceTrusted: (req: IncomingMessage) => boolean = () => false,
): void {
  const connected = metrics.gauge('hub_connected_sockets', 'Sockets connected to this hub node');
  // Beside the admitted sockets: connections still in their handshake, and transports that closed
  // without a word whose ping has not yet timed out.
  metrics.gauge(
    'hub_transports_open',
    'Engine.IO connections open on this hub node, admitted or not',
    [],
    () => io.engine.clientsCount,
  );
  const dispatch = methodDispatcher(ctx, methodTable(methods, metrics));
  const offline = (socket: HubSocket) =>
    presence
      .onDisconnect(socket)
      .catch((err) => ctx.logger.warn({ component: 'hub', err: (err as Error).message }, 'presence disconnect failed'));
  // One listener for every socket (`this` is the socket): a closure per socket would keep the connection
  // handler's scope (its room names, its join) for the socket's whole life.
  const onDisconnect = function (this: HubSocket) {
    connected.dec();
    void offline(this);
  };
  /** Sockets between the presence step and their 'connection', with what their transport's close does. */
  const admitting = new WeakMap<HubSocket, () => void>();
  /** The first read of each socket's push stream, begun with the presence step (startFirstRead). */
  const firstReads = new WeakMap<HubSocket, ReturnType<typeof startFirstRead>>();
  // Presence is recorded before the client sees `connect`, so a client's later calls and
  // disconnects are always ordered after its online transition.
  io.use((socket, next) => {
    const directory = ctx.directoryRooms(socket.data.principal).then(
      (extra) => {
        socket.data.directoryRooms = extra;
      },
      (err) => {
        socket.data.directoryRooms = null;
        ctx.logger.warn(
          { component: 'hub', code: 'service_unavailable', err: (err as Error).message },
          'directory rooms failed',
        );
      },
    );
    if (ctx.streams) firstReads.set(socket, startFirstRead(ctx.streams, socket));
    const online = presence
      .onConnect(socket)
      .catch((err) => ctx.logger.warn({ component: 'hub', err: (err as Error).message }, 'presence connect failed'));
    // A transport that closes before Socket.IO admits the socket (a client's blip during its handshake)
    // gets neither 'connection' nor 'disconnect': its connection is taken off presence here, after the add
    // it follows, or it would count the user online for as long as this node lives.
    const abandoned = () => void online.then(() => offline(socket));
    if (socket.conn.readyState === 'open') {
      socket.conn.once('close', abandoned);
      admitting.set(socket, abandoned);
    } else abandoned();
    void Promise.all([directory, online]).finally(() => next());
  });
  io.on('connection', (socket: HubSocket) => {
    const { tenant, principal } = socket.data;
    // Admitted: from now on its 'disconnect' takes it off presence.
    // Both maps' entries go now: a WeakMap keeps its value as long as its key (the socket) lives.
    const abandoned = admitting.get(socket);
    admitting.delete(socket);
    if (abandoned) socket.conn.off('close', abandoned);
    const firstRead = firstReads.get(socket);
    firstReads.delete(socket);
    connected.inc();
    // The directory rooms are joined with the tenant room at once, so a patient limited to the care team
    // is never in the tenant room without the tenant-patients exclusion (decision 230).
    const extra = socket.data.directoryRooms;
    socket.data.directoryRooms = undefined;
    // No room per session: a session's revocation finds its sockets in the user's room (decision 1185).
    const own = [
      rooms.user(tenant, principal.userId),
      ...(extra === null ? [] : [rooms.tenant(tenant), ...(extra ?? [])]),
    ];
    // The sharded adapter subscribes the room's channel on join; a Redis failure there is logged, not thrown.
    const join = () => Promise.resolve(socket.join(own));
    // With push histories: where the user's stream continues from, the rooms, then what was missed.
    (ctx.streams
      ? openStreams(
          ctx,
          ctx.streams,
          socket,
          async () => {
            await join();
            await ctx.streams!.subscribed([rooms.user(tenant, principal.userId)]);
          },
          firstRead,
        )
      : join()
    ).catch((err) =>
      ctx.logger.warn(
        { component: 'hub', code: 'service_unavailable', err: (err as Error).message },
        'joining own rooms failed',
      ),
    );
    // The handshake's token and positions were read (the principal holds what the socket needs): they
    // are not kept for the socket's life, a kilobyte per connection and a bearer token in memory.
    socket.handshake.auth = {};
    delete socket.handshake.query.access_token;
    ctx.sessions.attach(socket);
    serveMethods(socket, dispatch, new SocketRateLimit(rate), traceTrusted(socket.request));
    socket.on('disconnect', onDisconnect);
  });
}

/**
 * Resolves once `sub` (the adapter's subscriber) has subscribed the rooms' channels. The sharded adapter
 * subscribes a room's channel when the room appears on this node, without waiting for Redis; asking for
 * the same subscription again on the same connection answers after the adapter's own (one connection
 * answers in order), so from then on this node receives what is published to the rooms.
 */
export async function roomsSubscribed(sub: RedisConnection, channelPrefix: string, list: string[]): Promise<void> {
  // One channel per call: on a cluster, channels of different slots cannot share a command.
  await Promise.all(list.map((room) => sub.ssubscribe(`${channelPrefix}#/#${room}#`)));
}
