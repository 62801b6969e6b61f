import { existsSync } from 'node:fs';
import { loadConfig } from '../config/config.js';
import { cliEnvironment, targetLine } from '../config/local-services.js';
import { createServices } from '../composition.js';
import { createInfra, closeInfra } from '../infra.js';
import { toAppError } from '../core/errors.js';
import { TelemetryClient, conferenceScript } from '../vcs/telemetry.client.js';

const USAGE = `usage: npm run telemetry -- issue-key TENANT
       npm run telemetry -- simulate TENANT EVENT_ID [HOST:PORT]   (TELEMETRY_KEY=... or a fresh key is issued)`;

/**
 * Telemetry administration and demo from the shell: issue (rotate) a tenant's telemetry key, and
 * drive a whole conference for an event into a running ingest with the embedded gRPC client, which
 * completes the event (ledger, flags, meetingEvent) once a worker runs the completion job.
 */
async function main(argv: string[]): Promise<number> {
  const [cmd, tenant, eventId, address] = argv;
  if (!tenant || (cmd !== 'issue-key' && cmd !== 'simulate') || (cmd === 'simulate' && !eventId)) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  if (existsSync('.env')) process.loadEnvFile('.env');
  const config = loadConfig({ ...cliEnvironment(), ROLES: 'http', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  process.stderr.write(targetLine('telemetry', config));
  const infra = await createInfra(config);
  try {
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
    const app = toAppError(e);
    process.stderr.write(`error (${(e as { code?: string }).code ?? app.code}): ${(e as Error).message}\n`);
    return 1;
  } finally {
    await closeInfra(infra);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`fatal: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
