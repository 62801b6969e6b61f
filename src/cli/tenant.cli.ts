import { loadConfig, ConfigError } from '../config/config.js';
import { createServices } from '../composition.js';
import { createInfra, closeInfra } from '../infra.js';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AppError, toAppError } from '../core/errors.js';
import { seedDemoUsers } from '../data/seed/demo.seed.js';
import { AccountInput, type ProvisionedAccount } from '../core/account-setup.service.js';
import type { Config } from '../config/config.js';
import { cliEnvironment, targetLine } from '../config/local-services.js';

const USAGE = `usage: npm run tenant -- create NAME [DISPLAY NAME] [--admin USERNAME [--admin-email EMAIL]]
       npm run tenant -- invite-admin NAME USERNAME [EMAIL]   (a new set-password link or binding for an admin)
       npm run tenant -- migrate NAME | migrate-all | list | seed-demo
       npm run tenant -- audit verify|checkpoint|export NAME   (the audit chain: docs/audit.md)`;

/** The first admin from the command line, checked like the provisioning endpoint's body. */
function adminInput(username: string | undefined, email: string | undefined) {
  const r = AccountInput.safeParse({ username, ...(email ? { email } : {}) });
  if (!r.success)
    throw new AppError(
      'validation_failed',
      `admin: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
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
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { admin: { type: 'string' }, 'admin-email': { type: 'string' } },
    });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 64;
  }
  const { positionals: positional, values: flags } = parsed;
  const audit = positional[0] === 'audit';
  const [cmd, name, ...rest] = audit ? [`audit ${positional[1] ?? ''}`, ...positional.slice(2)] : positional;
  if (
    !cmd ||
    ((audit || ['create', 'migrate', 'invite-admin'].includes(cmd)) && !name) ||
    (cmd === 'invite-admin' && !rest[0])
  ) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  if (existsSync('.env')) process.loadEnvFile('.env');
  const config = loadConfig({ ...cliEnvironment(), ROLES: 'http', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  process.stderr.write(targetLine('tenant', config));
  const infra = await createInfra(config).catch((e: unknown) => {
    throw new AppError(
      'service_unavailable',
      `cannot reach MongoDB at ${config.mongo.uri} (${(e as Error).message}); 'npm run services' starts the local servers`,
    );
  });
  const { tenants, auth } = createServices(infra);
  try {
    switch (cmd) {
      case 'create': {
        const admin = flags.admin !== undefined ? adminInput(flags.admin, flags['admin-email']) : undefined;
        const r = await tenants.create({ name: name!, displayName: rest.join(' ') || undefined }, 'cli');
        const first = admin ? await auth.accountSetup.provision(name!, admin, 'first-admin', 'cli') : undefined;
        process.stdout.write(`${JSON.stringify({ ...r, ...(first ? { admin: first } : {}) }, null, 2)}\n`);
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
        process.stderr.write(`${USAGE}\n`);
        return 64;
    }
    return 0;
  } catch (e) {
    const app = toAppError(e);
    if (app.code === 'internal') throw e;
    process.stderr.write(`error (${app.code}): ${app.message}\n`);
    return 1;
  } finally {
    await closeInfra(infra);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    if (e instanceof ConfigError) process.stderr.write(`${e.message}\n`);
    else if (e instanceof AppError) process.stderr.write(`error (${e.code}): ${e.message}\n`);
    else process.stderr.write(`fatal: ${e?.stack ?? e}\n`);
    process.exit(e instanceof ConfigError ? 78 : 1);
  },
);
