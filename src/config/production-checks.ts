import { redisUrlHasPassword } from './redis-url.js';

/**
 * Development values of settings that guard something. They make `npm start` work on a fresh machine,
 * and each is public (it is in this file), so a production node must never run with one of them.
 */
export const DEV_DEFAULTS = {
  PROVISIONING_CODE: 'dev-provisioning-code-change-me',
  OIDC_CLIENT_SECRET: 'consult-web-secret',
  VCS_EMBEDDED_SECRET: 'dev-embedded-vcs-secret-change-me',
} as const;

/** The settings the production checks look at (a subset of the parsed environment). */
export interface ProductionInputs {
  PROVISIONING_CODE: string;
  OIDC_CLIENT_SECRET: string;
  OIDC_MODE: 'embedded' | 'external';
  ALLOW_EMBEDDED_IDP: boolean;
  VCS_ADAPTER: 'embedded' | 'livekit';
  VCS_EMBEDDED_SECRET: string;
  SEED_DEMO: boolean;
  WEBHOOK_ALLOW_LOCAL_RECEIVERS?: boolean;
  REDIS_URL: string;
  ALLOW_REDIS_WITHOUT_PASSWORD: boolean;
  KEY_ENCRYPTION_KEY?: string;
  KEY_ENCRYPTION_KEY_FILE?: string;
  METRICS_HOST: string;
  METRICS_TOKEN?: string;
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean;
  WEBHOOK_ALLOW_HTTP: boolean;
  TRUST_PROXY: string;
}

/** Whether a listen address is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/**
 * Why a production node must not start with these settings, one line per setting, each naming it.
 * An empty list means the configuration is acceptable for `NODE_ENV=production`.
 */
export function productionProblems(e: ProductionInputs): string[] {
  const problems: string[] = [];
  const devDefault = (name: keyof typeof DEV_DEFAULTS, value: string) => {
    if (value === DEV_DEFAULTS[name]) problems.push(`${name}: the development default must not be used in production`);
  };
  devDefault('PROVISIONING_CODE', e.PROVISIONING_CODE);
  devDefault('OIDC_CLIENT_SECRET', e.OIDC_CLIENT_SECRET);
  if (e.VCS_ADAPTER === 'embedded') devDefault('VCS_EMBEDDED_SECRET', e.VCS_EMBEDDED_SECRET);
  if (e.SEED_DEMO) problems.push('SEED_DEMO: demo users with a published password must not be created in production');
  if (e.WEBHOOK_ALLOW_LOCAL_RECEIVERS)
    problems.push(
      'WEBHOOK_ALLOW_LOCAL_RECEIVERS: webhook deliveries to plain http on loopback are for development receivers only',
    );
  if (e.OIDC_MODE === 'embedded' && !e.ALLOW_EMBEDDED_IDP) {
    problems.push(
      'OIDC_MODE: the embedded identity provider is for development; use OIDC_MODE=external or set ALLOW_EMBEDDED_IDP=true',
    );
  }
  if (!redisUrlHasPassword(e.REDIS_URL) && !e.ALLOW_REDIS_WITHOUT_PASSWORD) {
    problems.push(
      'REDIS_URL: production needs an authenticated Redis (redis://USER:PASSWORD@host:port, or redis+cluster://USER:PASSWORD@host1:port1,host2:port2), or ALLOW_REDIS_WITHOUT_PASSWORD=true when Redis is protected otherwise',
    );
  }
  if (!e.KEY_ENCRYPTION_KEY && !e.KEY_ENCRYPTION_KEY_FILE) {
    problems.push(
      'KEY_ENCRYPTION_KEY: production needs the key-encryption key of the signing keys in Redis (KEY_ENCRYPTION_KEY or KEY_ENCRYPTION_KEY_FILE: 32 random bytes, base64)',
    );
  }
  if (!isLoopbackHost(e.METRICS_HOST) && !e.METRICS_TOKEN) {
    problems.push(
      `METRICS_HOST: metrics on ${e.METRICS_HOST} are reachable from other machines; set METRICS_TOKEN (the bearer token every scrape must send) or listen on loopback`,
    );
  }
  if (e.WEBHOOK_ALLOW_PRIVATE_NETWORKS) {
    problems.push(
      "WEBHOOK_ALLOW_PRIVATE_NETWORKS: webhook deliveries could reach the deployment's own network (loopback, private ranges, cloud metadata); for development only",
    );
  }
  if (e.WEBHOOK_ALLOW_HTTP)
    problems.push('WEBHOOK_ALLOW_HTTP: webhook deliveries (events and their signatures) must use https in production');
  if (e.TRUST_PROXY.trim() === 'true') {
    problems.push(
      'TRUST_PROXY: true believes X-Forwarded-For from every client; name the proxies (addresses, CIDR ranges, loopback, linklocal, uniquelocal) or their hop count',
    );
  }
  return problems;
}
