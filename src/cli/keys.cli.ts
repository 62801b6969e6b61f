import { existsSync } from 'node:fs';
import { loadConfig } from '../config/config.js';
import { cliEnvironment, targetLine } from '../config/local-services.js';
import { createRedis } from '../data/redis.js';
import { redisKeys } from '../data/redis-keys.js';
import { createSigningKeys } from '../auth/auth-services.js';

const USAGE = 'usage: npm run keys -- rotate | list';

/**
 * Signing keys of internal tokens from the shell. `rotate` adds a key that signs from now on (every
 * node within its 30 s key cache); tokens signed with the earlier keys stay valid until they expire,
 * and a replaced key is removed a day after its successor appeared. `list` shows the keys that verify.
 */
async function main(argv: string[]): Promise<number> {
  const [cmd] = argv;
  if (cmd !== 'rotate' && cmd !== 'list') {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  if (existsSync('.env')) process.loadEnvFile('.env');
  const config = loadConfig({ ...cliEnvironment(), ROLES: 'http', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  process.stderr.write(targetLine('keys', config));
  const redis = createRedis(config.redis.url, 'keys-cli', { maxRetriesPerRequest: 1 });
  try {
    const { vault, signingKeys } = createSigningKeys(config, redis, redisKeys(config.redis.prefix));
    await signingKeys.check();
    if (cmd === 'rotate') {
      const r = await signingKeys.rotate();
      process.stdout.write(`${JSON.stringify({ signing: r.kid, stillVerifying: r.retained, keyEncryptionKey: vault.current.id })}\n`);
    } else {
      for (const k of await signingKeys.list()) process.stdout.write(`${k.kid}\t${k.createdAt}\t${k.signing ? 'signing' : 'verifying only'}\n`);
    }
    return 0;
  } finally {
    redis.disconnect();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (e: unknown) => {
  process.stderr.write(`error: ${(e as Error).message}\n`);
  process.exit((e as Error).name === 'KeyVaultError' || (e as Error).name === 'ConfigError' ? 78 : 1);
});
