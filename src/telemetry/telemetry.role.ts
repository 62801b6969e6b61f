import type { Server } from '@grpc/grpc-js';
import type { RoleContext, RoleHandle } from '../app/index.js';
import { startTelemetryServer, telemetryCredentials, telemetryHandlers } from './telemetry.server.js';
import { countHit } from '../edge/rate-limit.js';

export interface TelemetryRoleHandle extends RoleHandle {
  /** The port the gRPC server is bound to (resolved when GRPC_PORT=0). */
  port: number;
}

/** The 'telemetry' role: the gRPC ingest of the video conferencing system's conference telemetry. */
export async function startTelemetryRole(ctx: RoleContext): Promise<TelemetryRoleHandle> {
  const { infra, services } = ctx;
  const l = infra.config.limits;
  const limiter = { redis: infra.redis, keyFor: infra.keys.rateLimit };
  const perCredential = (tenant: string) =>
    countHit(limiter, 'telemetry', tenant, l.telemetryPerCredential, l.windowSeconds);
  const handlers = telemetryHandlers(
    services.telemetry,
    infra.logger.child({ component: 'telemetry' }),
    infra.metrics,
    perCredential,
  );
  const { tls } = infra.config.grpc;
  const { server, port } = await startTelemetryServer({
    host: infra.config.grpc.host,
    port: infra.config.grpc.port,
    handlers,
    credentials: telemetryCredentials(tls),
  });
  infra.logger.info(
    { component: 'telemetry', host: infra.config.grpc.host, port, tls: !!tls, clientAuth: !!tls?.clientCaFile },
    'telemetry ingest listening',
  );
  return {
    port,
    stop: () => shutdown(server),
  };
}

/** Lets in-flight calls finish for up to 5 s, then cuts the rest. */
function shutdown(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, 5000);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
