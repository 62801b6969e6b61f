import { loadConfig, type Config } from '../config/config.js';
import { parseArgs } from 'node:util';
import { AppError } from '../kernel/errors.js';
import { AccountInput, type ProvisionedAccount } from '../core/identity/account-setup.service.js';
import { cliEnvironment, redact, targetLine } from '../config/local-services.js';
import { cliLogger, describeError, EXIT, helpOrRefusal, requireSettings, usageError } from './cli-kit.js';

const USAGE = `usage: npm run tenant -- create NAME [DISPLAY NAME] [--admin USERNAME [--admin-email EMAIL]]
       npm run tenant -- invite-admin NAME USERNAME [EMAIL]   (a new set-password link or binding for an admin)
       npm run tenant -- migrate NAME | migrate-all | list | seed-demo
       npm run tenant -- audit verify|checkpoint|export NAME   (the audit chain: docs/audit.md)
  create is safe to repeat: an existing tenant is migrated and kept ("created": false), and an admin who
  has not set a password yet gets a new link. Settings: .env or the local services of 'npm start'.`;

const SPEC = {
  tool: 'tenant',
  usage: USAGE,
  commands: ['create', 'invite-admin', 'migrate', 'migrate-all', 'list', 'seed-demo', 'audit'],
} as const;
const AUDIT_COMMANDS = ['verify', 'checkpoint', 'export'];

/** The command line's names of the fields the services name in their errors, per command. */
const ARGUMENTS: Record<string, Record<string, string>> = {
  create: {
    tenantName: 'NAME',
    name: 'NAME',
    displayName: 'DISPLAY NAME',
    username: '--admin',
    email: '--admin-email',
  },
  'invite-admin': { tenantName: 'NAME', username: 'USERNAME', email: 'EMAIL' },
};
const argumentsOf = (cmd: string) => ARGUMENTS[cmd] ?? { tenantName: 'NAME' };

/** The first admin from the command line, checked like the provisioning endpoint's body. */
function adminInput(username: string | undefined, email: string | undefined) {
  const r = AccountInput.safeParse({ username, ...(email ? { email } : {}) });
  if (!r.success)
    throw new AppError('validation_failed', 'the admin account is not valid', {
      errors: r.error.issues.map((i) => ({ field: String(i.path[0] ?? 'username'), message: i.message })),
    });
  return { ...r.data, role: 'admin' };
}

/**
 * What the operator hands on to the admin, on stderr (stdout stays the JSON answer): the one-time
 * set-password link (embedded realm), or how the first sign-in at the tenant's own identity provider takes
 * the account (external: no link, the provider holds the credentials; decisions 180, 960).
 */
function handOver(tenant: string, account: ProvisionedAccount, config: Config): string {
  if (account.setPasswordUrl)
    return `[tenant] give ${account.username} this one-time link to set a password (valid until ${account.expiresAt}):\n${account.setPasswordUrl}\n`;
  if (!account.binding) return `[tenant] ${account.username} can sign in already; nothing to hand over\n`;
  const issuer = config.auth.oidc.issuerTemplate.replace('{tenant}', tenant);
  const by = account.binding.email
    ? `the verified email ${account.binding.email}`
    : `the username ${account.binding.username}`;
  return `[tenant] no link to hand over: the first sign-in at ${issuer} whose token carries ${by} becomes ${account.username} (open until ${account.expiresAt})\n`;
}

/** Tenant administration from the shell: the same service calls as the provisioning endpoint. */
async function main(argv: string[]): Promise<number> {
  const early = helpOrRefusal(argv, SPEC);
  if (early !== undefined) return early;
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { admin: { type: 'string' }, 'admin-email': { type: 'string' } },
    });
  } catch (e) {
    return usageError(SPEC, (e as Error).message.split('. ')[0]!);
  }
  const { positionals: positional, values: flags } = parsed;
  const audit = positional[0] === 'audit';
  if (audit && !AUDIT_COMMANDS.includes(positional[1] ?? ''))
    return usageError(
      SPEC,
      positional[1] ? `unknown command 'audit ${positional[1]}'` : `audit needs one of ${AUDIT_COMMANDS.join(', ')}`,
    );
  const [cmd, name, ...rest] = audit ? [`audit ${positional[1]}`, ...positional.slice(2)] : positional;
  if ((audit || ['create', 'migrate', 'invite-admin'].includes(cmd!)) && !name)
    return usageError(SPEC, `${cmd} needs the tenant's NAME`);
  if (cmd === 'invite-admin' && !rest[0]) return usageError(SPEC, "invite-admin needs the admin's USERNAME");
  if (cmd !== 'create' && (flags.admin !== undefined || flags['admin-email'] !== undefined))
    return usageError(SPEC, '--admin and --admin-email belong to create');
  requireSettings('tenant');
  // Loaded once the command line is accepted: help and usage errors answer without loading the service.
  const [{ createServices }, { createInfra, closeInfra }, { seedDemoUsers }] = await Promise.all([
    import('../composition/services.js'),
    import('../composition/infra.js'),
    import('../data/seed/demo.seed.js'),
  ]);
  const config = loadConfig({ ...cliEnvironment(), ROLES: 'http', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  process.stderr.write(targetLine('tenant', config));
  const infra = await createInfra(config, { logger: cliLogger(config) }).catch((e: unknown) => {
    throw new AppError(
      'service_unavailable',
      `cannot reach MongoDB at ${redact(config.mongo.uri)} (${(e as Error).message}); 'npm run services' starts the local servers`,
    );
  });
  try {
    await reachRedis(infra.redis, config.redis.url);
    const { tenants, auth } = createServices(infra);
    switch (cmd) {
      case 'create': {
        const admin = flags.admin !== undefined ? adminInput(flags.admin, flags['admin-email']) : undefined;
        const existed = (await tenants.list()).some((t) => t.name === name);
        const migration = await tenants.ensure({ name: name!, displayName: rest.join(' ') || undefined }, 'cli');
        const { tenant } = await tenants.require(name!);
        const first = admin ? await auth.accountSetup.provision(name!, admin, 'first-admin', 'cli') : undefined;
        const r = { tenant, created: !existed, migration, ...(first ? { admin: first } : {}) };
        process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
        if (first) process.stderr.write(handOver(name!, first, config));
        break;
      }
      case 'invite-admin': {
        await tenants.require(name!);
        const r = await auth.accountSetup.provision(name!, adminInput(rest[0], rest[1]), 'first-admin', 'cli');
        process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
        process.stderr.write(handOver(name!, r, config));
        break;
      }
      case 'migrate':
        process.stdout.write(`${JSON.stringify(await tenants.migrate(name!), null, 2)}\n`);
        break;
      case 'migrate-all':
        for (const t of await tenants.list())
          process.stdout.write(`${t.name}: ${JSON.stringify(await tenants.migrate(t.name))}\n`);
        break;
      case 'seed-demo':
        // An operator's explicit choice (a demo deployment), never a production node's start-up default.
        await tenants.ensure({ name: 'demo', displayName: 'Demo Hospital' }, 'cli');
        await seedDemoUsers(infra.mongo.tenantDb('demo'));
        process.stdout.write('tenant demo and its demo users are in place\n');
        break;
      case 'list':
        for (const t of await tenants.list())
          process.stdout.write(`${t.name}\t${t.status}\tv${t.schemaVersion}\t${t.displayName}\n`);
        break;
      case 'audit verify': {
        await tenants.require(name!);
        const report = await auth.audit.verify(name!);
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        return report.ok ? 0 : 2;
      }
      case 'audit checkpoint': {
        await tenants.require(name!);
        process.stdout.write(`${JSON.stringify(await auth.audit.checkpoint(name!), null, 2)}\n`);
        break;
      }
      case 'audit export': {
        await tenants.require(name!);
        for await (const line of auth.audit.exportLines(name!)) process.stdout.write(`${JSON.stringify(line)}\n`);
        break;
      }
      default:
        return usageError(SPEC, `unknown command '${cmd}'`);
    }
    return EXIT.ok;
  } catch (e) {
    process.stderr.write(describeError('tenant', e, argumentsOf(cmd!)));
    return (e as AppError).code === 'service_unavailable' ? EXIT.unavailable : EXIT.failed;
  } finally {
    await closeInfra(infra);
  }
}

/** Fails the command unless Redis answers with the configured credentials (NOAUTH is an error, not a warning). */
async function reachRedis(redis: { ping(): Promise<unknown> }, url: string): Promise<void> {
  await redis.ping().catch((e: unknown) => {
    throw new AppError('service_unavailable', `cannot use Redis at ${redact(url)}: ${(e as Error).message}`);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    try {
      process.stderr.write(describeError('tenant', e));
      process.exit(
        (e as Error).name === 'ConfigError'
          ? EXIT.config
          : (e as AppError).code === 'service_unavailable'
            ? EXIT.unavailable
            : EXIT.failed,
      );
    } catch {
      process.stderr.write(`tenant: fatal: ${(e as Error)?.stack ?? e}\n`);
      process.exit(EXIT.failed);
    }
  },
);
