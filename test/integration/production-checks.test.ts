import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { testEnv } from '../support/env.js';
import { runChildNodeToExit, spawnChildNode } from '../support/child-node.js';
import { dedicatedRedis, type DedicatedService } from '../support/dedicated-services.js';

/**
 * Production nodes (real processes of src/main.ts with NODE_ENV=production) refuse every development
 * default and name the setting; with real secrets they start.
 */
describe('production refuses development defaults', () => {
  let redis: DedicatedService;
  const secret = () => randomBytes(24).toString('base64url');

  beforeAll(async () => {
    redis = await dedicatedRedis('everysec', { user: 'consult', password: secret() });
  });
  afterAll(async () => {
    await redis?.destroy();
  });

  /** A production configuration with no development value left; each test puts one back. */
  const productionEnv = (overrides: Record<string, string> = {}) => {
    const env = testEnv({
      NODE_ENV: 'production',
      REDIS_URL: redis.url,
      METRICS_PORT: '0',
      PROVISIONING_CODE: secret(),
      OIDC_CLIENT_SECRET: secret(),
      VCS_EMBEDDED_SECRET: secret(),
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      OIDC_MODE: 'external',
      OIDC_ISSUER_TEMPLATE: 'https://idp.example.test/realms/{tenant}',
      SEED_DEMO: 'false',
      ROLES: 'http',
    });
    for (const [k, v] of Object.entries(overrides)) {
      if (v === '') delete env[k];
      else env[k] = v;
    }
    return env;
  };

  it('starts when every secret is set and the defaults are off', async () => {
    const node = await spawnChildNode(productionEnv());
    expect(node.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await node.stop();
  });

  it.each<[string, () => Record<string, string>]>([
    ['PROVISIONING_CODE', () => ({ PROVISIONING_CODE: '' })],
    ['OIDC_CLIENT_SECRET', () => ({ OIDC_CLIENT_SECRET: '' })],
    ['VCS_EMBEDDED_SECRET', () => ({ VCS_EMBEDDED_SECRET: '' })],
    ['SEED_DEMO', () => ({ SEED_DEMO: 'true' })],
    ['OIDC_MODE', () => ({ OIDC_MODE: 'embedded', OIDC_ISSUER_TEMPLATE: '' })],
    ['REDIS_URL', () => ({ REDIS_URL: `redis://127.0.0.1:${redis.port}` })],
    ['KEY_ENCRYPTION_KEY', () => ({ KEY_ENCRYPTION_KEY: '' })],
    ['METRICS_HOST', () => ({ METRICS_HOST: '0.0.0.0' })],
    ['METRICS_HOST', () => ({ METRICS_HOST: '::' })],
    ['METRICS_HOST', () => ({ METRICS_HOST: '10.1.2.3' })],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => ({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })],
    ['WEBHOOK_ALLOW_HTTP', () => ({ WEBHOOK_ALLOW_HTTP: 'true' })],
    ['TRUST_PROXY', () => ({ TRUST_PROXY: 'true' })],
  ])('refuses to start with the development value of %s and names it', async (setting, overrides) => {
    const { code, stderr } = await runChildNodeToExit(productionEnv(overrides()));
    expect(code).toBe(78);
    expect(stderr).toContain(`${setting}:`);
    // Exactly the one setting this case broke is named.
    expect(stderr.split('\n').filter((l) => l.startsWith('  - '))).toHaveLength(1);
  });

  it('serves metrics on every interface when METRICS_TOKEN guards them, and trusts a named proxy', async () => {
    const node = await spawnChildNode(
      productionEnv({ METRICS_HOST: '0.0.0.0', METRICS_TOKEN: secret(), TRUST_PROXY: 'loopback, 10.0.0.0/8' }),
    );
    await node.stop();
  });

  it('runs the embedded identity provider in production only when explicitly allowed', async () => {
    const node = await spawnChildNode(
      productionEnv({ OIDC_MODE: 'embedded', OIDC_ISSUER_TEMPLATE: '', ALLOW_EMBEDDED_IDP: 'true', ROLES: 'http,idp' }),
    );
    await node.stop();
  });

  it('accepts a password-less Redis only when ALLOW_REDIS_WITHOUT_PASSWORD says it is deliberate', async () => {
    // The tests' shared Redis has no password (under its own key prefix here).
    const node = await spawnChildNode(
      productionEnv({ REDIS_URL: testEnv().REDIS_URL!, ALLOW_REDIS_WITHOUT_PASSWORD: 'true' }),
    );
    await node.stop();
  });

  it('names every refused setting at once', async () => {
    const env = testEnv({ NODE_ENV: 'production', SEED_DEMO: 'true' });
    delete env.PROVISIONING_CODE;
    // A Redis URL without credentials (the node exits before it connects), whatever the tests' Redis needs.
    const redis = new URL(env.REDIS_URL!);
    redis.username = '';
    redis.password = '';
    env.REDIS_URL = redis.toString();
    const { code, stderr } = await runChildNodeToExit(env);
    expect(code).toBe(78);
    for (const s of [
      'PROVISIONING_CODE',
      'OIDC_CLIENT_SECRET',
      'VCS_EMBEDDED_SECRET',
      'SEED_DEMO',
      'OIDC_MODE',
      'REDIS_URL',
      'KEY_ENCRYPTION_KEY',
    ]) {
      expect(stderr).toContain(`${s}:`);
    }
  });
});
