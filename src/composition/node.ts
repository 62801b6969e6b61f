import http, { type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, Router } from 'express';
import type { Config } from '../config/config.js';
import { listenPublic } from '../http/listen.js';
import type { Role } from '../config/env-schema.js';
import type { Services } from '../app/index.js';
import { createServices } from './services.js';
import type { Infra } from '../app/index.js';
import { createInfra, closeInfra } from './infra.js';
import { createHttpApp } from '../http/app.js';
import { AppError, toProblem } from '../kernel/errors.js';
import { seedDemoUsers } from '../data/seed/demo.seed.js';
import { ROLE_ORDER, ROLE_STARTERS } from './roles.js';
import type { RoleHandle } from '../app/index.js';
import { roleLinks } from './role-links.js';
import { historyPublisher } from '../realtime/redis-publisher.js';
import type { PushPublisher } from '../realtime/push-delivery.js';
import { startMetricsServer, type MetricsServer } from '../observability/metrics-server.js';

export interface NodeHandle {
  config: Config;
  infra: Infra;
  services: Services;
  server?: HttpServer;
  /** Base URL of the HTTP server (ephemeral port resolved). */
  url?: string;
  /** Base URL of the metrics listener (`/metrics`), separate from the public port. */
  metricsUrl: string;
  roles: Map<Role, RoleHandle>;
  /** The Express app serving `server` (tests walk its router stack against the route declarations). */
  app?: Express;
  stop(): Promise<void>;
}

/**
 * What a node can be given instead of what it builds: the logger and metrics (src/composition/infra.ts), and
 * `pushes`, where its actors push while no hub role runs (default: the Redis push relay with histories).
 */
export type NodeOverrides = Parameters<typeof createInfra>[1] & { pushes?: PushPublisher };

/**
 * Starts one node with the roles of its configuration, composed in one pass (decision 1125): infra, then
 * the services with the links to what the roles will provide (the actor client and the hub's publisher,
 * resolved on use), then the roles in ROLE_ORDER. Used by src/main.ts and by tests that run several nodes
 * in one process. Shutdown order: stop accepting, drain hub and actors, workers, telemetry, then Redis and
 * MongoDB.
 */
export async function startNode(config: Config, overrides: NodeOverrides = {}): Promise<NodeHandle> {
  const { pushes: relay, ...infraOverrides } = overrides;
  const infra = await createInfra(config, infraOverrides);
  const started = new Map<Role, RoleHandle>();
  const links = roleLinks(
    started,
    relay ?? historyPublisher(infra.redis, infra.keys, infra.config.hub.history, infra.logger),
  );
  const services = createServices(infra, links);
  try {
    await services.auth.checkStoredKeys();
  } catch (e) {
    await closeInfra(infra);
    throw e;
  }
  if (config.seedDemo) {
    await services.tenants.ensure({ name: 'demo', displayName: 'Demo Hospital' });
    await seedDemoUsers(infra.mongo.tenantDb('demo'));
  }
  const needsHttp = config.roles.some((r) => r === 'http' || r === 'hub' || r === 'idp');
  // The request listener is in place before any role attaches to the server: Socket.IO (hub role)
  // wraps the listeners it finds, so it alone answers /hubs/mobile/ and hands every other request to
  // this one, which delegates to the Express app built once the roles mounted their routers
  // (docs/decisions/620). A listener added after Socket.IO would also answer the hub's requests.
  let app: Express | undefined;
  const server = needsHttp
    ? http.createServer((req, res) => {
        if (app) return void app(req, res);
        const problem = toProblem(
          new AppError('service_unavailable', 'The node is starting'),
          undefined,
          req.url?.split('?')[0],
        );
        res
          .writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' })
          .end(JSON.stringify(problem));
      })
    : undefined;
  const preTenant: { path: string; router: Router | Express }[] = [];
  const routes: { path: string; router: Router }[] = [];
  let metricsServer: MetricsServer | undefined;
  const mount = {
    preTenant: (path: string, router: Router | Express) => preTenant.push({ path, router }),
    route: (path: string, router: Router) => routes.push({ path, router }),
  };
  const ctx = { infra, services, server, mount, started, pushes: links.pushes, actorClient: links.actorClient };

  try {
    const dashboardToken = config.metrics.queueDashboardToken;
    // Loaded only when configured: the operator's queue dashboard (decision 841).
    const pages = dashboardToken
      ? [
          await import('../workers/queue-dashboard.js').then((d) => ({
            prefix: d.QUEUE_DASHBOARD_PATH,
            handle: d.queueDashboard(infra.queues, dashboardToken),
          })),
        ]
      : [];
    metricsServer = await startMetricsServer(infra.metrics, config.metrics, pages);
    for (const role of ROLE_ORDER) {
      if (!config.roles.includes(role) || role === 'http') continue;
      const load = ROLE_STARTERS[role];
      if (!load) throw new Error(`role '${role}' is not available in this build`);
      const start = await load();
      started.set(role, await start(ctx));
      infra.logger.info({ component: 'node', role }, 'role started');
    }
    if (config.roles.includes('http')) {
      // REST and GraphQL reach the meeting actors (join by code, waiting room) through the actor system of
      // a role started above (links.actorClient), or a client-only one on a node without one (HTTP-only),
      // started here and stopped with the http role.
      if (!links.actorClient()) {
        const { startActorSystem } = await import('../actors/runtime/node-system.js');
        started.set('http', await startActorSystem(ctx, []));
      }
    }
    if (config.roles.includes('http') && services.contactDirectory) {
      // Listed before the node listens, so /readyz is never asked before the loading began; with no
      // tenant to load it is done at once (decision 1139).
      void services.contactDirectory.warm(await directoryTenants(infra, services));
    }
    if (server) {
      app = createHttpApp(infra, services, { preTenant, routes: config.roles.includes('http') ? routes : [] });
      server.keepAliveTimeout = 65_000;
      await listenPublic(server, config.http);
    }
  } catch (e) {
    await stopAll(started, server, infra, services, metricsServer);
    throw e;
  }

  const addr = server?.address() as AddressInfo | null | undefined;
  const url = addr ? `http://127.0.0.1:${addr.port}` : undefined;
  const metricsUrl = metricsServer!.url;
  infra.logger.info({ component: 'node', roles: config.roles, url, metricsUrl }, 'node started');
  let stopping: Promise<void> | undefined;
  return {
    config,
    infra,
    services,
    server,
    url,
    metricsUrl,
    roles: started,
    app,
    stop: () => (stopping ??= stopAll(started, server, infra, services, metricsServer)),
  };
}

/**
 * The active tenants whose contact directories a node loads at start (decision 1139): /readyz answers
 * not ready until they are loaded. A failed listing loads none.
 */
async function directoryTenants(infra: Infra, services: Services): Promise<string[]> {
  try {
    return (await services.tenants.list()).filter((t) => t.status === 'active').map((t) => t.name);
  } catch (err) {
    infra.logger.warn(
      { component: 'contact-directory', err: (err as Error).message },
      'tenants not listed for the directory',
    );
    return [];
  }
}

async function stopAll(
  started: Map<Role, RoleHandle>,
  server: HttpServer | undefined,
  infra: Infra,
  services: Services,
  metricsServer?: MetricsServer,
): Promise<void> {
  const closing = server ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
  server?.closeIdleConnections();
  for (const role of [...started.keys()].reverse()) {
    try {
      await started.get(role)!.stop();
    } catch (err) {
      infra.logger.error({ component: 'node', role, err }, 'role failed to stop cleanly');
    }
  }
  server?.closeAllConnections();
  await closing;
  // Coalesced lastSeenAt updates of the sockets the hub just closed, before MongoDB goes.
  await services.presence.close();
  await metricsServer?.close();
  await closeInfra(infra);
}
