import http, { type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, Router } from 'express';
import type { Config, Role } from '../config/config.js';
import { createServices, type Services } from './services.js';
import { createInfra, closeInfra, type Infra } from './infra.js';
import { createHttpApp } from '../http/app.js';
import { AppError, toProblem } from '../kernel/errors.js';
import { seedDemoUsers } from '../data/seed/demo.seed.js';
import { ROLE_ORDER, ROLE_STARTERS } from './roles.js';
import { type RoleHandle } from './role-context.js';
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
 * Starts one node with the roles of its configuration. Used by src/main.ts and by tests that run
 * several nodes in one process. Shutdown order: stop accepting, drain hub and actors, workers,
 * telemetry, then Redis and MongoDB.
 */
export async function startNode(
  config: Config,
  overrides: Parameters<typeof createInfra>[1] = {},
): Promise<NodeHandle> {
  const infra = await createInfra(config, overrides);
  const services = createServices(infra);
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
  const started = new Map<Role, RoleHandle>();
  let metricsServer: MetricsServer | undefined;
  const mount = {
    preTenant: (path: string, router: Router | Express) => preTenant.push({ path, router }),
    route: (path: string, router: Router) => routes.push({ path, router }),
  };

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
      started.set(role, await start({ infra, services, server, mount, started }));
      infra.logger.info({ component: 'node', role }, 'role started');
    }
    if (config.roles.includes('http')) {
      // REST and GraphQL reach the meeting actors (join by code, waiting room) through this node's actor
      // system, or a client-only one on an HTTP-only node (stopped with the http role), unless the workers
      // role attached one already.
      const { attachMeetingRooms } = await import('../actors/runtime/node-system.js');
      const stop = await attachMeetingRooms({ infra, services, server, mount, started });
      if (stop) started.set('http', { stop });
    }
    if (server) {
      app = createHttpApp(infra, services, { preTenant, routes: config.roles.includes('http') ? routes : [] });
      server.keepAliveTimeout = 65_000;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.http.port, config.http.host, () => resolve());
      });
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
