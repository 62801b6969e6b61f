import { loadConfig, ConfigError } from './config/config.js';
import { packageEngines, unsupportedNodeNote } from './config/node-lines.js';

/** Process entry: reads ROLES, starts them, and shuts down in order on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  // Loaded after the configuration is accepted: a refused configuration exits without loading the app.
  const [{ startNode }, { renderBanner }] = await Promise.all([
    import('./composition/node.js'),
    import('./cli/banner.js'),
  ]);
  // The tracing SDK is loaded only when an OTLP endpoint is configured (off by default: decision 840).
  const tracing = config.tracing.endpoint
    ? (await import('./observability/tracing-setup.js')).startTracing(config.tracing, config.nodeId)
    : undefined;
  let node;
  try {
    node = await startNode(config);
  } catch (e) {
    // The stored signing keys do not open with the configured key-encryption keys (or those are unusable).
    if (e instanceof Error && e.name === 'KeyVaultError') {
      process.stderr.write(`Invalid configuration:\n  - ${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  const log = node.infra.logger;
  const nodeNote = unsupportedNodeNote(process.version, packageEngines());
  if (nodeNote) log.warn({ component: 'main', nodeVersion: process.version }, nodeNote);
  // Last line of defence (decision 621): every handler answers or logs its own failures; a promise
  // rejection that still escapes is logged with a code and the process keeps serving. An uncaught
  // exception leaves state unknown: it is logged with a code and the process exits for its supervisor
  // to restart it.
  process.on('unhandledRejection', (err) =>
    log.error({ component: 'main', code: 'internal', err }, 'unhandled promise rejection'),
  );
  process.on('uncaughtException', (err) => {
    log.fatal({ component: 'main', code: 'internal', err }, 'uncaught exception: exiting');
    process.exit(70);
  });
  if (config.seedDemo) {
    const grpcPort = (node.roles.get('telemetry') as { port?: number } | undefined)?.port;
    process.stdout.write(`${renderBanner({ config, url: node.url, grpcPort, metricsUrl: node.metricsUrl })}\n`);
  }
  let firstSignalAt = 0;
  const shutdown = (signal: string) => {
    // One Ctrl+C reaches this process several times (terminal, npm and scripts/start.mjs all pass it
    // on): repeats within a second are the same request; a later one means "stop waiting".
    if (firstSignalAt && Date.now() - firstSignalAt < 1000) return;
    if (firstSignalAt) {
      log.warn({ component: 'main', signal }, 'second signal: exiting now');
      process.exit(1);
    }
    firstSignalAt = Date.now();
    log.info({ component: 'main', signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    node
      .stop()
      .then(() => tracing?.shutdown())
      .then(
        () => process.exit(0),
        (err) => {
          log.error({ component: 'main', err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${err?.stack ?? err}\n`);
  process.exit(1);
});
