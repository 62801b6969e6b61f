import { rooms } from '../realtime/rooms.js';
import type { Infra } from '../app/index.js';
import type { RoleContext, RoleHandle } from '../app/index.js';
import { actorSystemOf } from '../actors/runtime/index.js';
import { startActorSystem } from '../actors/runtime/node-system.js';
import { subscribePushes, type RelayedPush } from '../realtime/redis-publisher.js';
import { createHubServer, onConnections, roomsSubscribed } from './hub.server.js';
import { pushHistoryFor } from '../realtime/push-history.js';
import { SocketSessions } from './hub.session.js';
import { sessionMethods } from './handlers/session.handlers.js';
import { corsDelegate } from '../edge/cors.js';
import { HubPresence } from './hub.presence.js';
import { FollowUps } from './follow-ups.js';
import { SocketIoHubPublisher } from './hub.publisher.js';
import { callMethods } from './handlers/call.handlers.js';
import { meetingMethods } from './handlers/meeting.handlers.js';
import { consentMethods } from './handlers/consent.handlers.js';
import { deviceMethods } from './handlers/device.handlers.js';
import { signallingMethods } from './handlers/signalling.handlers.js';
import type { HubContext } from './hub.types.js';
import { addressKey, callerIsTrusted, clientAddress } from '../edge/client-address.js';
import { compileTrustProxy } from '../config/trust-proxy.js';
import { countHit, HUB_SESSION_BUCKET, PER_IP_BUCKET } from '../edge/rate-limit.js';

/** A connection to the configured Redis (one server or a cluster), from infra's connectRedis. */
type RedisConnection = Infra['redis'];

/** Presence heartbeat of this node (the presence service expires a silent node's connections). */
export const PRESENCE_HEARTBEAT_MS = 10_000;

export const HUB_METHODS = [
  ...callMethods,
  ...meetingMethods,
  ...consentMethods,
  ...deviceMethods,
  ...signallingMethods,
  ...sessionMethods,
];

export interface HubRoleHandle extends RoleHandle {
  io: ReturnType<typeof createHubServer>;
  /** The actor system the hub asks: the node's own, or the hub's client-only one. */
  actors: ReturnType<typeof actorSystemOf>;
  /**
   * Resolves once no work a connection or disconnection started is left (presence, a meeting leave
   * of the audit trail, a waiting-room leave): after a socket's `disconnect` on this node, what its
   * going away changes is stored.
   */
  settled(): Promise<void>;
}

/** Hub handshakes share the HTTP per-IP budget (same bucket, same TRUST_PROXY reading of the address). */
function admitter({ infra }: RoleContext) {
  const trust = compileTrustProxy(infra.config.http.trustProxy);
  const l = infra.config.limits;
  const deps = { redis: infra.redis, keyFor: infra.keys.rateLimit };
  return (req: Parameters<typeof clientAddress>[0]) =>
    countHit(deps, PER_IP_BUCKET, addressKey(clientAddress(req, trust)), l.perIp, l.windowSeconds);
}

/** The tenant's own media origin: its tenant host and the public URL's host, on the public URL's port. */
function ownMediaOrigin(http: { publicUrl: string; baseDomain: string }) {
  const pub = new URL(http.publicUrl);
  return (tenant: string) => ({
    tenant,
    hosts: [`${tenant}.${http.baseDomain}`.toLowerCase(), pub.hostname.toLowerCase()],
    port: pub.port === '0' ? undefined : pub.port,
    allowHttp: pub.protocol === 'http:',
  });
}

/** New engine.io sessions per address (RATE_LIMIT_HUB_SESSIONS_PER_IP), a bucket of their own, same address reading. */
function sessionAdmitter({ infra }: RoleContext) {
  const trust = compileTrustProxy(infra.config.http.trustProxy);
  const l = infra.config.limits;
  const deps = { redis: infra.redis, keyFor: infra.keys.rateLimit };
  return (req: Parameters<typeof clientAddress>[0]) =>
    countHit(deps, HUB_SESSION_BUCKET, addressKey(clientAddress(req, trust)), l.hubSessionsPerIp, l.windowSeconds);
}

/**
 * The `hub` role: Socket.IO at /hubs/mobile on the node's HTTP server, wired to the actor system: the
 * node's own when it runs `actors` (hosting actors), otherwise a client-only system of the hub's that
 * asks the actors hosted by other nodes (`ROLES=http,hub` beside `ROLES=actors` nodes).
 * Stops in order: stop accepting sockets, presence, subscriptions, then the adapter's Redis clients.
 */
export async function startHubRole(ctx: RoleContext): Promise<HubRoleHandle> {
  const { infra, services, server } = ctx;
  if (!server) throw new Error("the 'hub' role needs the node's HTTP server");
  const own = ctx.started.has('actors') ? undefined : await startActorSystem(ctx, []);
  const system = own?.system ?? actorSystemOf(ctx.started);
  const pub = infra.connectRedis('hub-pub');
  // On a cluster the adapter's SSUBSCRIBEs go to the master of each channel's slot.
  const sub = infra.connectRedis('hub-sub', { shardedSubscribers: true, subscriber: true });
  const pushSub = infra.connectRedis('hub-push-sub', { subscriber: true });
  const io = createHubServer({
    server,
    pubClient: pub,
    subClient: sub,
    channelPrefix: infra.keys.hubAdapter,
    logger: infra.logger,
    metrics: infra.metrics,
    cors: corsDelegate({
      deploymentOrigins: infra.config.http.corsOrigins,
      baseDomain: infra.config.http.baseDomain,
      tenantOrigins: (t) => services.admin.allowedOrigins(t),
    }),
    admitSession: sessionAdmitter(ctx),
    handshake: {
      baseDomain: infra.config.http.baseDomain,
      resolveTenant: (n) => services.tenants.resolve(n),
      verifyAccessToken: (t, tok) => services.auth.verifyAccessToken(t, tok),
      logger: infra.logger,
      admit: admitter(ctx),
    },
  });
  const history = pushHistoryFor(infra.redis, infra.keys, infra.config.hub.history, infra.logger);
  // Offered by this role's handle: the node's actors push through it once the hub runs (ctx.pushes).
  const publisher = new SocketIoHubPublisher(io, infra.logger, history);
  const sessions = new SocketSessions(io, {
    verifyAccessToken: (t, tok) => services.auth.verifyAccessToken(t, tok),
    permissionsOf: (t, r) => services.auth.authorizer.permissionsOf(t, r),
    logger: infra.logger,
  });
  const followUps = new FollowUps();
  // What a closed socket still leaves to do (presence, a meeting's leave): 0 once its effects are done.
  infra.metrics.gauge(
    'hub_follow_ups_in_flight',
    'Presence updates and disconnect work this hub node has started and not finished',
    [],
    () => followUps.size,
  );
  const hub: HubContext = {
    io,
    actors: system,
    meetings: services.meetings,
    logger: infra.logger,
    metrics: infra.metrics,
    sessions,
    canReadMedia: (principal, hash) => services.mediaAccess.canRead(principal, hash),
    resolveDevice: (tenant, id) => services.peripherals.resolveDeviceId(tenant, id),
    assertDeviceClaim: (principal, ids) => services.deviceRegistrations.assertMayClaim(principal, ids),
    directoryRooms: async (principal) => {
      const ids = await services.directoryScope.visibleTo(principal);
      return ids
        ? [rooms.tenantPatients(principal.tenant), ...ids.map((id) => rooms.presenceOf(principal.tenant, String(id)))]
        : [rooms.tenantPresence(principal.tenant)];
    },
    ownMedia: ownMediaOrigin(infra.config.http),
    shareMediaToEvent: (principal, eventId, hash) => services.mediaAccess.shareToEvent(principal, eventId, hash),
    audit: services.auth.audit,
    followUps,
    streams: { history, subscribed: (list) => roomsSubscribed(sub, infra.keys.hubAdapter, list) },
  };
  const presence = new HubPresence(io, services.presence, infra.config.nodeId, infra.logger, followUps);
  await presence.start(PRESENCE_HEARTBEAT_MS);
  const trust = compileTrustProxy(infra.config.http.trustProxy);
  onConnections(io, hub, HUB_METHODS, presence, infra.config.hub.rateLimit, infra.metrics, (req) =>
    callerIsTrusted(req, trust),
  );
  const relay = (p: RelayedPush) => publisher.emitLocal(p.rooms, p.event, p.payload, p.except);
  const unsubs = [
    // Pushes from nodes without a hub (workers, actor-only nodes) arrive on this channel; each hub node
    // delivers them to its own sockets, so together they reach every socket once.
    await subscribePushes(
      pushSub,
      infra.keys.hubPush,
      relay,
      (err) => infra.logger.error({ component: 'hub', code: 'internal', err }, 'relayed push not delivered'),
      (m) => publisher.moveLocal(m.rooms, m.move),
    ),
    await services.auth.revocations.subscribe(
      (m) => void sessions.apply(m),
      (err) => infra.logger.error({ component: 'auth', code: 'internal', err }, 'revocation handler failed'),
    ),
  ];
  return {
    io,
    actors: system,
    actorClient: system,
    pushPublisher: publisher,
    settled: () => followUps.settled(),
    stop: async () => {
      await stopHub(io, presence, unsubs, [pub, sub, pushSub]);
      await own?.stop();
    },
  };
}

async function stopHub(
  io: HubRoleHandle['io'],
  presence: HubPresence,
  unsubs: (() => Promise<void>)[],
  clients: RedisConnection[],
): Promise<void> {
  presence.stop();
  // Closing the server drops every connection as a transport close, after which clients reconnect by
  // themselves (to another node, or to this one's replacement). Disconnecting the sockets first would
  // tell them `io server disconnect`, which socket.io clients take as final: they would stay offline.
  await new Promise<void>((resolve) => io.close(() => resolve()));
  // Presence updates and the closed sockets' meeting and waiting-room leaves (one tracker).
  await presence.drain();
  await Promise.allSettled(unsubs.map((u) => u()));
  await Promise.allSettled(clients.map((c) => c.quit()));
}
