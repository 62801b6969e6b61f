import { loadConfig, ConfigError } from '../config/config.js';
import { createInfra, createServices, closeInfra } from '../composition.js';
import { existsSync } from 'node:fs';
import { AppError, toAppError } from '../core/errors.js';
import { seedDemoUsers } from '../data/seed/demo.seed.js';
import { cliEnvironment, targetLine } from '../config/local-services.js';

const USAGE = 'usage: npm run tenant -- create NAME [DISPLAY NAME] | migrate NAME | migrate-all | list | seed-demo';

/** Tenant administration from the shell: the same service calls as the provisioning endpoint. */
async function main(argv: string[]): Promise<number> {
  const [cmd, name, ...rest] = argv;
  if (!cmd || (['create', 'migrate'].includes(cmd) && !name)) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  if (existsSync('.env')) process.loadEnvFile('.env');
  const config = loadConfig({ ...cliEnvironment(), ROLES: 'http', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  process.stderr.write(targetLine('tenant', config));
  const infra = await createInfra(config).catch((e: unknown) => {
    throw new AppError('service_unavailable', `cannot reach MongoDB at ${config.mongo.uri} (${(e as Error).message}); 'npm run services' starts the local servers`);
  });
  const { tenants } = createServices(infra);
  try {
    switch (cmd) {
      case 'create': {
        const r = await tenants.create({ name: name!, displayName: rest.join(' ') || undefined });
        process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
        break;
      }
      case 'migrate':
        process.stdout.write(`${JSON.stringify(await tenants.migrate(name!), null, 2)}\n`);
        break;
      case 'migrate-all':
        for (const t of await tenants.list()) process.stdout.write(`${t.name}: ${JSON.stringify(await tenants.migrate(t.name))}\n`);
        break;
      case 'seed-demo':
        // An operator's explicit choice (a demo deployment), never a production node's start-up default.
        await tenants.ensure({ name: 'demo', displayName: 'Demo Hospital' });
        await seedDemoUsers(infra.mongo.tenantDb('demo'));
        process.stdout.write('tenant demo and its demo users are in place\n');
        break;
      case 'list':
        for (const t of await tenants.list()) process.stdout.write(`${t.name}\t${t.status}\tv${t.schemaVersion}\t${t.displayName}\n`);
        break;
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

main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
  if (e instanceof ConfigError) process.stderr.write(`${e.message}\n`);
  else if (e instanceof AppError) process.stderr.write(`error (${e.code}): ${e.message}\n`);
  else process.stderr.write(`fatal: ${e?.stack ?? e}\n`);
  process.exit(e instanceof ConfigError ? 78 : 1);
});
