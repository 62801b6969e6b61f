import { existsSync } from 'node:fs';
import { loadConfig } from '../config/config.js';
import { cliEnvironment, targetLine } from '../config/local-services.js';
import { createRedis } from '../data/redis.js';
import { redisKeys } from '../data/redis-keys.js';
import { createSigningKeys } from '../auth/auth-services.js';

const USAGE = 'usage: npm run keys -- rotate | list | rotate-realm [--activate-in SECONDS] | list-realm';

const COMMANDS = new Set(['rotate', 'list', 'rotate-realm', 'list-realm']);

/**
 * Signing keys from the shell. `rotate` adds an internal-token key that signs from now on (every
 * node within its 30 s key cache); tokens signed with the earlier keys stay valid until they expire,
 * and a replaced key is removed a day after its successor appeared. `list` shows the keys that verify.
 * `rotate-realm` does the same for the embedded realms' keys (RS256 and ES256): the new keys are
 * published at once and sign after `--activate-in` seconds (default 60, longer than any node's and
 * relying party's JWKS refetch cool-down); `list-realm` shows them.
 */
async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const activateIn = rest[0] === '--activate-in' && /^\d+$/.test(rest[1] ?? '') ? Number(rest[1]) : undefined;
  if (
    !cmd ||
    !COMMANDS.has(cmd) ||
    (rest.length > 0 && (cmd !== 'rotate-realm' || activateIn === undefined || rest.length !== 2))
  ) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  if (existsSync('.env')) process.loadEnvFile('.env');
  const config = loadConfig({ ...cliEnvironment(), ROLES: 'http', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  process.stderr.write(targetLine('keys', config));
  const redis = createRedis(config.redis.url, 'keys-cli', { maxRetriesPerRequest: 1 });
  try {
    const { vault, signingKeys, idpSecrets } = createSigningKeys(config, redis, redisKeys(config.redis.prefix));
    await signingKeys.check();
    if (cmd === 'rotate-realm') {
      const r = await idpSecrets.rotate(activateIn === undefined ? {} : { activateInSeconds: activateIn });
      process.stdout.write(
        `${JSON.stringify({ added: r.added, dropped: r.dropped, keyEncryptionKey: vault.current.id })}\n`,
      );
    } else if (cmd === 'list-realm') {
      for (const k of await idpSecrets.list())
        process.stdout.write(
          `${k.kid}\t${k.alg}\t${new Date(k.activeFrom).toISOString()}\t${k.signing ? 'signing' : k.activeFrom > Date.now() ? 'published, signs later' : 'verifying only'}\n`,
        );
    } else if (cmd === 'rotate') {
      const r = await signingKeys.rotate();
      process.stdout.write(
        `${JSON.stringify({ signing: r.kid, stillVerifying: r.retained, keyEncryptionKey: vault.current.id })}\n`,
      );
    } else {
      for (const k of await signingKeys.list())
        process.stdout.write(`${k.kid}\t${k.createdAt}\t${k.signing ? 'signing' : 'verifying only'}\n`);
    }
    return 0;
  } finally {
    redis.disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`error: ${(e as Error).message}\n`);
    process.exit((e as Error).name === 'KeyVaultError' || (e as Error).name === 'ConfigError' ? 78 : 1);
  },
);
