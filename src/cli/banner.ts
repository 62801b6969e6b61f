import type { Config } from '../config/config.js';
import { DEMO_USERS, DEMO_PASSWORD } from '../data/seed/demo.seed.js';
import { DEMO_MEETING_CODE } from '../data/seed/demo-content.seed.js';

/** Where a freshly started node answers, as a person would type it. */
export interface BannerInput {
  config: Config;
  /** Base URL the node's HTTP server listens on (ephemeral port resolved). */
  url?: string;
  grpcPort?: number;
  /** Base URL of the node's metrics listener. */
  metricsUrl?: string;
}

/**
 * The human-readable start-up banner of `npm start`: URLs to try and the demo sign-in details. It is
 * printed once, beside the JSON logs, only when the demo tenant is seeded (never in production).
 */
export function renderBanner({ config, url, grpcPort, metricsUrl }: BannerInput): string {
  const port = url ? new URL(url).port : String(config.http.port);
  const tenantUrl = `http://demo.${config.http.baseDomain}:${port}`;
  const local = `http://127.0.0.1:${port}`;
  const metrics = metricsUrl ?? `http://${config.metrics.host}:${config.metrics.port}`;
  const has = (role: string) => config.roles.includes(role as Config['roles'][number]);
  const lines = [
    '',
    `Consult service is running (node ${config.nodeId}, roles: ${config.roles.join(', ')})`,
    '',
    `  Tenant "demo"     ${tenantUrl}   (browsers resolve *.localhost; curl: -H 'Host: demo.localhost:${port}' ${local})`,
    `  Ping              curl -H 'Host: demo.localhost:${port}' ${local}/api/tenant/ping`,
    `  Health            ${local}/healthz   ${local}/readyz`,
    `  Metrics           ${metrics}/metrics   (own listener, METRICS_PORT)`,
    config.metrics.queueDashboardToken
      ? `  Queue dashboard   ${metrics}/queues   (Basic authentication: any user name, QUEUE_DASHBOARD_TOKEN as the password)`
      : `  Queue dashboard   ${metrics}/queues   (off: set QUEUE_DASHBOARD_TOKEN, 16 characters or more, in .env)`,
  ];
  if (has('http')) lines.push(`  REST API docs     ${tenantUrl}/api/docs`, `  GraphQL           ${tenantUrl}/graphql`);
  if (has('workers') && config.webhooks.allowLocalReceivers)
    lines.push(
      `  Webhooks          npm run webhooks -- listen   (a local receiver subscribed to "demo", events printed)`,
    );
  if (has('hub')) lines.push(`  Realtime hub      ${tenantUrl}/hubs/mobile (Socket.IO; token in auth.token)`);
  if (has('telemetry')) lines.push(`  Telemetry gRPC    ${config.grpc.host}:${grpcPort ?? config.grpc.port}`);
  if (has('idp') && config.auth.oidc.mode === 'embedded') {
    lines.push(
      `  Identity realm    ${local}/realms/demo   (discovery: ${local}/realms/demo/.well-known/openid-configuration)`,
    );
  }
  lines.push('', `  Demo sign-in (password "${DEMO_PASSWORD}" for every user):`);
  for (const u of DEMO_USERS) lines.push(`    ${u.username.padEnd(10)} ${u.role.padEnd(10)} ${u.displayName}`);
  lines.push(
    '',
    `  Demo consultation: Dr Alice Moreau with Pat Patient tomorrow 09:00 UTC, join code ${DEMO_MEETING_CODE}`,
  );
  lines.push('', '  Stop with Ctrl+C. Local data lives in .local/ (delete it to start afresh).', '');
  return lines.join('\n');
}
