import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../config/config.js';
import { cliEnvironment, targetLine } from '../config/local-services.js';
import { AppError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { cliLogger, describeError, EXIT, helpOrRefusal, requireSettings, usageError } from './cli-kit.js';

const USAGE = `usage: npm run webhooks -- listen [TENANT] [--types T1,T2] [--as USERNAME] [--replay-from CURSOR]
                                      [--port PORT] [--exit-after N]
  Development receiver for outbound events (docs/webhooks.md): opens a receiver on 127.0.0.1, subscribes it
  to TENANT (default demo) as the admin USERNAME (default admin), verifies each delivery's Standard Webhooks
  signature and prints the event; Ctrl+C deletes the subscription. --replay-from CURSOR has the events after
  CURSOR (0: the oldest kept) delivered again first. --exit-after N stops after N verified events.
  Reaches the running service's own workers: they deliver to loopback only where WEBHOOK_ALLOW_LOCAL_RECEIVERS
  is on (the default under 'npm start'; refused in production, decision 1071).`;

const SPEC = { tool: 'webhooks', usage: USAGE, commands: ['listen'] } as const;

interface Delivery {
  id: string;
  verified: boolean;
  type?: string;
  sequence?: string;
  body: string;
}

/** One line per delivery: sequence, type, consultation, the event id, and whether the signature verified. */
function line(d: Delivery): string {
  if (!d.verified) return `REFUSED ${d.id || '(no webhook-id)'}: the signature does not verify\n`;
  const data = (JSON.parse(d.body) as { data?: Record<string, unknown> }).data ?? {};
  const about = data.consultationId ?? data.mediaFileId ?? data.importId ?? '-';
  return `#${d.sequence} ${d.type} ${String(about)} ${d.id} verified ${JSON.stringify(data)}\n`;
}

async function main(argv: string[]): Promise<number> {
  const early = helpOrRefusal(argv, SPEC);
  if (early !== undefined) return early;
  let parsed;
  try {
    parsed = parseArgs({
      args: argv.slice(1),
      allowPositionals: true,
      options: {
        types: { type: 'string' },
        as: { type: 'string' },
        'replay-from': { type: 'string' },
        port: { type: 'string' },
        'exit-after': { type: 'string' },
      },
    });
  } catch (e) {
    return usageError(SPEC, (e as Error).message.split('. ')[0]!);
  }
  const { positionals, values } = parsed;
  if (positionals.length > 1) return usageError(SPEC, `listen takes one TENANT, not '${positionals.join(' ')}'`);
  const tenant = positionals[0] ?? 'demo';
  const port = values.port === undefined ? 0 : Number(values.port);
  const exitAfter = values['exit-after'] === undefined ? undefined : Number(values['exit-after']);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) return usageError(SPEC, '--port must be a port number');
  if (exitAfter !== undefined && !(Number.isInteger(exitAfter) && exitAfter > 0))
    return usageError(SPEC, '--exit-after must be a positive number of events');

  requireSettings('webhooks');
  const [{ createServices }, { createInfra, closeInfra }, { WEBHOOK_EVENT_TYPES }] = await Promise.all([
    import('../composition/services.js'),
    import('../composition/infra.js'),
    import('../core/webhooks/webhook-events.js'),
  ]);
  // This process creates the subscription, so its own policy must take the loopback URL; a production
  // configuration refuses this setting (production checks), so the command fails there.
  const config = loadConfig({
    ...cliEnvironment(),
    ROLES: 'http',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    WEBHOOK_ALLOW_LOCAL_RECEIVERS: 'true',
  });
  const types = values.types ? values.types.split(',').map((t) => t.trim()) : [...WEBHOOK_EVENT_TYPES];
  const unknown = types.filter((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length) return usageError(SPEC, `--types: unknown event type ${unknown.join(', ')}`);
  process.stderr.write(targetLine('webhooks', config));
  const infra = await createInfra(config, { logger: cliLogger(config) });
  const received: Delivery[] = [];
  let server: http.Server | undefined;
  let subscriptionId: string | undefined;
  let principal: Principal | undefined;
  const services = createServices(infra);
  const stop = async () => {
    if (subscriptionId && principal)
      await services.webhooks.subscriptions.remove(principal, subscriptionId).catch(() => undefined);
    subscriptionId = undefined;
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await closeInfra(infra);
  };
  try {
    await infra.redis.ping().catch((e: unknown) => {
      throw new AppError('service_unavailable', `cannot use Redis: ${(e as Error).message}`);
    });
    const { db } = await services.tenants.require(tenant);
    const username = values.as ?? 'admin';
    const admin = await db.models.User.findOne({ username, status: 'active' }).lean<{ _id: unknown; role: string }>();
    if (!admin) throw new AppError('user_not_found', `no active user '${username}' in tenant ${tenant} (--as)`);
    if (admin.role !== 'admin')
      throw new AppError(
        'permission_denied',
        `'${username}' is not an admin of ${tenant}: subscriptions need tenant:admin`,
      );
    principal = {
      tenant,
      userId: String(admin._id),
      username,
      role: admin.role,
      permissions: new Set(['tenant:admin']) as Principal['permissions'],
      scheme: 'internal',
    };

    let verifier: Webhook | undefined;
    let done: (() => void) | undefined;
    const finished = new Promise<void>((r) => (done = r));
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = {
          'webhook-id': String(req.headers['webhook-id'] ?? ''),
          'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
        };
        let d: Delivery = { id: headers['webhook-id'], verified: false, body };
        try {
          const event = verifier!.verify(body, headers) as { type: string; sequence: string };
          d = { ...d, verified: true, type: event.type, sequence: event.sequence };
        } catch {
          /* refused below: a delivery that does not verify is answered 400 and never printed as an event */
        }
        res.writeHead(d.verified ? 204 : 400).end();
        process.stdout.write(line(d));
        if (!d.verified) return;
        if (received.some((r) => r.id === d.id))
          process.stdout.write(`  (a repeat of ${d.id}: de-duplicate by webhook-id)\n`);
        received.push(d);
        if (exitAfter !== undefined && received.length >= exitAfter) done?.();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', resolve);
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
    const created = await services.webhooks.subscriptions.create(principal, {
      url,
      types,
      description: 'npm run webhooks -- listen (development receiver)',
    });
    subscriptionId = created.subscription.id;
    verifier = new Webhook(created.secret);
    process.stderr.write(
      `[webhooks] listening on ${url}, subscribed to tenant ${tenant} as ${subscriptionId} (${types.length} event types)\n` +
        `[webhooks] signing secret ${created.secret} (this receiver verifies with it); Ctrl+C unsubscribes\n`,
    );
    if (values['replay-from'] !== undefined)
      await services.webhooks.subscriptions.replay(principal, subscriptionId, values['replay-from']);
    await new Promise<void>((resolve) => {
      void finished.then(resolve);
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => resolve());
    });
    return EXIT.ok;
  } catch (e) {
    process.stderr.write(
      describeError('webhooks', e, { tenantName: 'TENANT', url: '--port', types: '--types', after: '--replay-from' }),
    );
    return (e as AppError).code === 'service_unavailable' ? EXIT.unavailable : EXIT.failed;
  } finally {
    await stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    let text: string;
    try {
      text = describeError('webhooks', e);
    } catch {
      text = `webhooks: fatal: ${(e as Error)?.stack ?? e}\n`;
    }
    process.stderr.write(text);
    process.exit((e as Error)?.name === 'ConfigError' ? EXIT.config : EXIT.failed);
  },
);
