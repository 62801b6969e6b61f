// The environment the service reads, as one zod schema (names and defaults documented in .env.example and
// docs/configuration.md); src/config/config.ts turns it into the typed Config.
import { z } from 'zod';
import { parseKek } from './key-encryption.js';
import { compileTrustProxy } from './trust-proxy.js';
import { DEV_DEFAULTS } from './production-checks.js';
import { parseRedisUrl } from './redis-url.js';

/** Process roles a node can run; the default runs all of them in one process. */
export const ROLES = ['http', 'hub', 'actors', 'workers', 'telemetry', 'idp'] as const;
export type Role = (typeof ROLES)[number];

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** An http(s) page URL, optionally with `{tenant}` in it (checked with a sample tenant put in). */
const webPageUrl = z
  .string()
  .trim()
  .min(1)
  .refine((v) => {
    try {
      return /^https?:$/.test(new URL(v.replaceAll('{tenant}', 'tenant')).protocol);
    } catch {
      return false;
    }
  }, 'must be an http(s) URL, {tenant} allowed');
const kek = z
  .string()
  .refine((v) => parseKek(v) !== undefined, 'must be 32 random bytes in base64 (openssl rand -base64 32)');

/**
 * Every environment variable the service reads, in one schema. Names and defaults are documented
 * in .env.example and docs/configuration.md; nothing else reads process.env.
 */
export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  ROLES: z
    .string()
    .default(ROLES.join(','))
    .transform((s) =>
      s
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(ROLES)).min(1)),
  NODE_ID: z.string().min(1).optional(),
  HOST: z.string().default('0.0.0.0'),
  PORT: port.default(8080),
  /** Connections the kernel holds for the public port before the node accepts them (decision 1145). */
  HTTP_LISTEN_BACKLOG: z.coerce.number().int().min(1).max(65535).default(4096),
  PUBLIC_URL: z.url().optional(),
  BASE_DOMAIN: z.string().min(1).default('localhost'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT: z.string().default('1mb'),
  TRUST_PROXY: z
    .string()
    .default('false')
    .refine((v) => {
      try {
        compileTrustProxy(v);
        return true;
      } catch {
        return false;
      }
    }, 'must be false, true, a hop count, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal, uniquelocal'),
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.url().transform((u) => new URL(u).origin))),
  WEB_SIGNIN_REDIRECT_URI: webPageUrl.optional(),
  WEB_LOGIN_APPROVE_URL: webPageUrl.optional(),
  METRICS_HOST: z.string().default('127.0.0.1'),
  METRICS_PORT: port.default(9464),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  QUEUE_DASHBOARD_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('consult-service'),
  TRACING_SAMPLE_RATIO: z.coerce.number().min(0).max(1).default(1),
  TRACING_EXPORT_DELAY_MS: positiveInt.default(5000),

  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// or mongodb+srv:// URI')
    .default('mongodb://127.0.0.1:27027/'),
  MONGODB_CATALOG_DB: z.string().min(1).default('consult_catalog'),
  MONGODB_TENANT_DB_PREFIX: z.string().min(1).default('consult_t_'),
  MONGODB_TIMEOUT_MS: positiveInt.default(5000),

  REDIS_URL: z
    .string()
    .superRefine((v, ctx) => {
      try {
        parseRedisUrl(v);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    })
    .default('redis://127.0.0.1:6390'),
  // Braces would make a cluster hash tag of the prefix and crowd every key into one slot (decision 860).
  REDIS_PREFIX: z
    .string()
    .regex(/^[^{}]*$/, 'must not contain { or }')
    .default('consult:'),
  ALLOW_REDIS_WITHOUT_PASSWORD: bool.default(false),

  STORAGE_DRIVER: z.enum(['fs', 's3']).default('fs'),
  STORAGE_FS_ROOT: z.string().default('.local/objects'),
  /** Objects up to this many bytes read or put whole by synchronous calls (decision 1190); 0: none. */
  STORAGE_FS_SYNC_BYTES: z.coerce.number().int().min(0).max(16_777_216).default(1_048_576),
  S3_ENDPOINT: z.url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().default('consult'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),
  S3_REQUEST_TIMEOUT_MS: positiveInt.default(20000),

  PROVISIONING_CODE: z.string().min(16, 'must be at least 16 characters').default(DEV_DEFAULTS.PROVISIONING_CODE),
  TOKEN_ISSUER: z.string().default('consult-service'),
  ACCESS_TOKEN_TTL_SECONDS: positiveInt.default(300),
  REFRESH_TOKEN_TTL_SECONDS: positiveInt.default(60 * 60 * 12),
  REFRESH_REUSE_GRACE_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  IDP_TOKEN_MAX_LIFETIME_SECONDS: positiveInt.default(60 * 60 * 24),
  IDP_LOGOUT_TOKEN_MAX_AGE_SECONDS: positiveInt.default(300),
  OIDC_JWKS_COOLDOWN_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  KEY_ENCRYPTION_KEY: kek.optional(),
  KEY_ENCRYPTION_KEY_FILE: z.string().min(1).optional(),
  KEY_ENCRYPTION_KEY_PREVIOUS: kek.optional(),
  KEY_ENCRYPTION_KEY_PREVIOUS_FILE: z.string().min(1).optional(),
  ACCOUNT_SETUP_LINK_TTL_HOURS: positiveInt.default(72),

  OIDC_MODE: z.enum(['embedded', 'external']).default('embedded'),
  OIDC_ISSUER_TEMPLATE: z.string().includes('{tenant}').optional(),
  OIDC_CLIENT_ID: z.string().default('consult-web'),
  OIDC_CLIENT_SECRET: z.string().default(DEV_DEFAULTS.OIDC_CLIENT_SECRET),
  ALLOW_EMBEDDED_IDP: bool.default(false),
  OIDC_AUDIENCE: z.string().default('consult-api'),

  GRPC_HOST: z.string().min(1).optional(),
  GRPC_PORT: port.default(50051),
  GRPC_TLS_CERT_FILE: z.string().min(1).optional(),
  GRPC_TLS_KEY_FILE: z.string().min(1).optional(),
  GRPC_TLS_CA_FILE: z.string().min(1).optional(),
  GRPC_TLS_CLIENT_AUTH: bool.default(false),

  VCS_ADAPTER: z.enum(['embedded', 'livekit']).default('embedded'),
  LIVEKIT_URL: z.string().optional(),
  LIVEKIT_API_KEY: z.string().optional(),
  LIVEKIT_API_SECRET: z.string().optional(),
  VCS_EMBEDDED_SECRET: z.string().min(16).default(DEV_DEFAULTS.VCS_EMBEDDED_SECRET),
  VCS_EMBEDDED_FINALIZE_MS: z.coerce.number().int().min(0).default(0),

  JOBS_CONCURRENCY: positiveInt.default(4),
  JOBS_ATTEMPTS: positiveInt.default(5),
  JOBS_BACKOFF_MS: positiveInt.default(1000),
  JOBS_LOCK_MS: positiveInt.default(30_000),
  AUDIT_CHECKPOINT_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(60),

  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  WEBHOOK_ALLOW_HTTP: bool.default(false),
  /** Development receivers (`npm run webhooks -- listen`): http:// to loopback only; default SEED_DEMO; refused in production. */
  WEBHOOK_ALLOW_LOCAL_RECEIVERS: bool.optional(),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  WEBHOOK_MAX_RESPONSE_BYTES: positiveInt.default(65_536),
  WEBHOOK_PAUSE_AFTER_FAILURES: positiveInt.default(15),
  WEBHOOK_BACKOFF_MS: positiveInt.default(5000),
  WEBHOOK_BACKOFF_MAX_MS: positiveInt.default(3_600_000),
  WEBHOOK_RETENTION_HOURS: positiveInt.default(720),
  WEBHOOK_SWEEP_MS: positiveInt.default(5000),
  WEBHOOK_SECRET_GRACE_HOURS: positiveInt.default(24),

  ACTOR_SHARDS: positiveInt.default(256),
  ACTOR_LEASE_MS: positiveInt.default(3000),
  ACTOR_IDLE_MS: positiveInt.default(120_000),
  /** How often a hosting node looks in Redis for crashed members' connections; 0: never (decision 1116). */
  ACTOR_CONNECTION_POLL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .refine((v) => v === 0 || v >= 100, 'must be 0 (off) or at least 100 (above a reconnect of the client)')
    .default(250),
  /** How long a finished actor's snapshot (an ended call) stays in Redis before it expires. */
  ACTOR_RETIRED_RETENTION_SECONDS: z.coerce.number().int().min(60).max(604_800).default(600),
  /** A turn that holds its actor's mailbox longer than this is logged (warn, `slow actor turn`). */
  ACTOR_SLOW_TURN_MS: z.coerce.number().int().min(1).max(600_000).default(1_000),
  /**
   * How far apart the nodes' clocks may be: a node runs an ask another node sent until this long past
   * the asker's deadline, read on its own clock (decision 1140).
   */
  ACTOR_DEADLINE_SKEW_MS: z.coerce.number().int().min(0).max(60_000).default(1_000),
  /** Asks between nodes over direct TCP links (on), or all by the Redis lists (off); decision 1186. */
  ACTOR_LINK: z.enum(['on', 'off']).default('on'),
  /** The address a hosting node's link listens on (loopback: only nodes of the same host dial it). */
  ACTOR_LINK_HOST: z.string().min(1).default('127.0.0.1'),
  /** Its port; 0: any free one (published in Redis either way). */
  ACTOR_LINK_PORT: z.coerce.number().int().min(0).max(65_535).default(0),
  /** The address peers dial when it differs from ACTOR_LINK_HOST (a pod's IP when it binds 0.0.0.0). */
  ACTOR_LINK_ADVERTISE: z.string().min(1).optional(),

  HUB_RING_TIMEOUT_MS: positiveInt.default(45_000),
  /** How often an active call checks its parties' connections; one away at two checks in a row is gone. */
  HUB_CALL_PRESENCE_CHECK_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  HUB_DEVICE_HEARTBEAT_MS: positiveInt.default(10_000),
  HUB_RATE_LIMIT_BURST: positiveInt.default(60),
  HUB_RATE_LIMIT_PER_SECOND: positiveInt.default(20),
  HUB_PUSH_HISTORY_MS: positiveInt.default(120_000),
  HUB_PUSH_HISTORY_MAX: positiveInt.default(500),
  HUB_PUSH_POSITION_TTL_MS: positiveInt.default(86_400_000),

  RATE_LIMIT_WINDOW_SECONDS: positiveInt.default(60),
  RATE_LIMIT_PER_IP: positiveInt.default(600),
  RATE_LIMIT_HUB_SESSIONS_PER_IP: positiveInt.default(600),
  RATE_LIMIT_SIGNIN_PER_IP: positiveInt.default(30),
  RATE_LIMIT_SIGNIN_PER_ACCOUNT: positiveInt.default(10),
  RATE_LIMIT_TELEMETRY_PER_CREDENTIAL: positiveInt.default(6000),
  PAGE_MAX_TAKE: positiveInt.default(100),
  GRAPHQL_TIME_BUDGET_MS: positiveInt.default(5000),

  CONTACT_DIRECTORY_MEMORY: z.enum(['auto', 'on', 'off']).default('auto'),
  CONTACT_DIRECTORY_MAX_TENANTS: positiveInt.default(20),
  CONTACT_DIRECTORY_MAX_ENTRIES: positiveInt.default(2_000_000),
  CONTACT_DIRECTORY_REBUILD_SECONDS: positiveInt.default(600),
  /** Decision 1132: how long a patient's care team stays in the Redis cache; 0 turns the cache off. */
  CARE_TEAM_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(86_400).default(1800),

  SEED_DEMO: bool.default(false),
});

export type Env = z.infer<typeof EnvSchema>;
