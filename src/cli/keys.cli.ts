import { loadConfig } from '../config/config.js';
import { cliEnvironment, redact, targetLine } from '../config/local-services.js';
import { AppError } from '../kernel/errors.js';
import { describeError, EXIT, helpOrRefusal, requireSettings, usageError } from './cli-kit.js';

const USAGE = 'usage: npm run keys -- rotate | list | rotate-realm [--activate-in SECONDS] | list-realm';

const SPEC = { tool: 'keys', usage: USAGE, commands: ['rotate', 'list', 'rotate-realm', 'list-realm'] } as const;

/**
 * Signing keys from the shell. `rotate` adds an internal-token key that signs from now on (every
 * node within its 30 s key cache); tokens signed with the earlier keys stay valid until they expire,
 * and a replaced key is removed a day after its successor appeared. `list` shows the keys that verify.
 * `rotate-realm` does the same for the embedded realms' keys (RS256 and ES256): the new keys are
 * published at once and sign after `--activate-in` seconds (default 60, longer than any node's and
 * relying party's JWKS refetch cool-down); `list-realm` shows them.
 */
async function main(argv: string[]): Promise<number> {
  const early = helpOrRefusal(argv, SPEC);
  if (early !== undefined) return early;
  const [cmd, ...rest] = argv;
  const activateIn = rest[0] === '--activate-in' && /^\d+$/.test(rest[1] ?? '') ? Number(rest[1]) : undefined;
  if (rest.length > 0 && (cmd !== 'rotate-realm' || activateIn === undefined || rest.length !== 2))
    return usageError(
      SPEC,
      cmd === 'rotate-realm' ? '--activate-in takes a number of seconds' : `${cmd} takes no arguments`,
    );
  requireSettings('keys');
  // Loaded once the command line is accepted: help and usage errors answer at once.
  const [{ createRedis }, { redisKeys }, { createSigningKeys }] = await Promise.all([
    import('../data/redis.js'),
    import('../data/redis-keys.js'),
    import('../composition/auth.wiring.js'),
  ]);
  const config = loadConfig({ ...cliEnvironment(), ROLES: 'http', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  process.stderr.write(targetLine('keys', config));
  const redis = createRedis(config.redis.url, 'keys-cli', { maxRetriesPerRequest: 1 });
  try {
    await redis.ping().catch((e: unknown) => {
      throw new AppError(
        'service_unavailable',
        `cannot use Redis at ${redact(config.redis.url)}: ${(e as Error).message}`,
      );
    });
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
    const name = (e as Error).name;
    let text: string;
    try {
      text = name === 'KeyVaultError' ? `keys: error: ${(e as Error).message}\n` : describeError('keys', e);
    } catch {
      text = `keys: fatal: ${(e as Error)?.stack ?? e}\n`;
    }
    process.stderr.write(text);
    process.exit(
      name === 'KeyVaultError' || name === 'ConfigError'
        ? EXIT.config
        : (e as AppError).code === 'service_unavailable'
          ? EXIT.unavailable
          : EXIT.failed,
    );
  },
);
