import { loadConfig } from '../config/config.js';
import { cliEnvironment, redact, targetLine } from '../config/local-services.js';
import { AppError } from '../kernel/errors.js';
import { cliLogger, describeError, EXIT, helpOrRefusal, requireSettings, usageError } from './cli-kit.js';

const USAGE = `usage: npm run telemetry -- issue-key TENANT
       npm run telemetry -- simulate TENANT EVENT_ID [HOST:PORT]   (TELEMETRY_KEY=... or a fresh key is issued)`;
const SPEC = { tool: 'telemetry', usage: USAGE, commands: ['issue-key', 'simulate'] } as const;

/**
 * Telemetry administration and demo from the shell: issue (rotate) a tenant's telemetry key, and
 * drive a whole conference for an event into a running ingest with the embedded gRPC client, which
 * completes the event (ledger, flags, meetingEvent) once a worker runs the completion job.
 */
async function main(argv: string[]): Promise<number> {
  const early = helpOrRefusal(argv, SPEC);
  if (early !== undefined) return early;
  const [cmd, tenant, eventId, address] = argv;
  if (!tenant) return usageError(SPEC, `${cmd} needs the TENANT`);
  if (cmd === 'simulate' && !eventId) return usageError(SPEC, 'simulate needs the EVENT_ID');
  requireSettings('telemetry');
  // Loaded once the command line is accepted: help and usage errors answer at once.
  const [{ createServices }, { createInfra, closeInfra }, { TelemetryClient, conferenceScript }] = await Promise.all([
    import('../composition/services.js'),
    import('../composition/infra.js'),
    import('../vcs/telemetry.client.js'),
  ]);
  const config = loadConfig({ ...cliEnvironment(), ROLES: 'http', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  process.stderr.write(targetLine('telemetry', config));
  const infra = await createInfra(config, { logger: cliLogger(config) });
  try {
    await infra.redis.ping().catch((e: unknown) => {
      throw new AppError(
        'service_unavailable',
        `cannot use Redis at ${redact(config.redis.url)}: ${(e as Error).message}`,
      );
    });
    const services = createServices(infra);
    const key =
      cmd === 'simulate' && process.env.TELEMETRY_KEY
        ? process.env.TELEMETRY_KEY
        : await services.telemetry.issueKey(tenant);
    if (cmd === 'issue-key') {
      process.stdout.write(`${key}\n`);
      return 0;
    }
    const target = address ?? `127.0.0.1:${config.grpc.port}`;
    const client = new TelemetryClient(target, tenant, key);
    const script = conferenceScript({
      conferenceId: `demo-${eventId}`,
      eventId: eventId!,
      chatMessages: 4,
      recording: true,
      start: new Date(Date.now() - 3600_000),
      participants: [
        { key: 'host', name: 'Host' },
        { key: 'guest:demo', name: 'Guest' },
      ],
    });
    const ack = await client.stream(script);
    client.close();
    process.stdout.write(`${JSON.stringify({ sent: script.length, ack }, null, 2)}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(describeError('telemetry', e, { tenantName: 'TENANT', eventId: 'EVENT_ID' }));
    return (e as AppError).code === 'service_unavailable' ? EXIT.unavailable : EXIT.failed;
  } finally {
    await closeInfra(infra);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    let text: string;
    try {
      text = describeError('telemetry', err);
    } catch {
      text = `telemetry: fatal: ${err?.stack ?? err}\n`;
    }
    process.stderr.write(text);
    process.exit((err as Error)?.name === 'ConfigError' ? EXIT.config : EXIT.failed);
  },
);
