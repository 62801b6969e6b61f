import { z } from 'zod';
import { compileTrustProxy } from './trust-proxy.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseKek, type KeyEncryptionSettings } from './key-encryption.js';
import { DEV_DEFAULTS, productionProblems } from './production-checks.js';
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

/** The development key-encryption key, generated once under the project's .local/ (never in production). */
const DEV_KEK_FILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '.local',
  'key-encryption-key',
);

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
  CONTACT_DIRECTORY_MAX_ENTRIES: positiveInt.default(250_000),
  CONTACT_DIRECTORY_REBUILD_SECONDS: positiveInt.default(600),

  SEED_DEMO: bool.default(false),
});

export type Env = z.infer<typeof EnvSchema>;

/** The validated, frozen configuration handed to the composition root. */
export interface Config {
  env: Env['NODE_ENV'];
  nodeId: string;
  roles: readonly Role[];
  http: {
    host: string;
    port: number;
    publicUrl: string;
    baseDomain: string;
    bodyLimit: string;
    trustProxy: string;
    corsOrigins: readonly string[];
    /** Deployment-wide web app pages (`{tenant}` replaced per tenant); unset = the service's own pages (decision 330). */
    webApp: { signInRedirectUri?: string; loginApproveUrl?: string };
  };
  /** The Prometheus endpoint's own listener, never the public port. */
  metrics: { host: string; port: number; token?: string; queueDashboardToken?: string };
  /** OpenTelemetry traces, exported over OTLP/HTTP when an endpoint is set (off by default; decision 840). */
  tracing: { endpoint?: string; serviceName: string; sampleRatio: number; exportDelayMs: number };
  log: { level: Env['LOG_LEVEL'] };
  mongo: { uri: string; catalogDb: string; tenantDbPrefix: string; timeoutMs: number };
  /** `cluster` when REDIS_URL names a Redis Cluster (decision 860). */
  redis: { url: string; prefix: string; cluster: boolean };
  storage: {
    driver: Env['STORAGE_DRIVER'];
    fsRoot: string;
    s3: {
      endpoint?: string;
      region: string;
      bucket: string;
      accessKeyId?: string;
      secretAccessKey?: string;
      forcePathStyle: boolean;
      requestTimeoutMs: number;
    };
  };
  auth: {
    provisioningCode: string;
    tokenIssuer: string;
    accessTokenTtlSeconds: number;
    refreshTokenTtlSeconds: number;
    /** A refresh token superseded this recently may be presented again once more (its answer was lost): decision 1103. */
    refreshReuseGraceSeconds: number;
    /** Identity-provider access tokens living longer are refused; revocation markers live this long. */
    idpTokenMaxLifetimeSeconds: number;
    /** Back-channel logout tokens issued longer ago than this are refused (their `jti` is kept this long). */
    idpLogoutTokenMaxAgeSeconds: number;
    /** How long a set-password link or a first-sign-in binding stays open. */
    accountSetupLinkTtlSeconds: number;
    oidc: {
      mode: Env['OIDC_MODE'];
      issuerTemplate: string;
      clientId: string;
      clientSecret: string;
      audience: string;
      allowEmbedded: boolean;
      jwksCooldownSeconds: number;
    };
    /** Key-encryption keys of the signing keys kept in Redis (docs/decisions/150). */
    keyEncryption: KeyEncryptionSettings;
  };
  grpc: { host: string; port: number; tls?: GrpcTlsFiles };
  vcs: {
    adapter: Env['VCS_ADAPTER'];
    livekit: { url?: string; apiKey?: string; apiSecret?: string };
    embedded: { secret: string; finalizeMs: number };
  };
  jobs: { concurrency: number; attempts: number; backoffMs: number; lockMs: number };
  /** Signed checkpoints of the audit chains' new entries (decisions 881, 1020); 0 turns the periodic run off. */
  audit: { checkpointIntervalSeconds: number };
  /** Outbound events (docs/webhooks.md, decisions 890-893). */
  webhooks: {
    allowPrivateNetworks: boolean;
    allowHttp: boolean;
    /** http:// to loopback (127.0.0.0/8, ::1, localhost) for development receivers; nothing else (decision 1071). */
    allowLocalReceivers: boolean;
    timeoutMs: number;
    maxResponseBytes: number;
    pauseAfterFailures: number;
    backoffMs: number;
    backoffMaxMs: number;
    retentionHours: number;
    sweepMs: number;
    secretGraceHours: number;
  };
  actors: { shards: number; leaseMs: number; idleMs: number; retiredRetentionMs: number; connectionPollMs: number };
  hub: {
    ringTimeoutMs: number;
    /** How often an active call checks that its parties are still connected. */
    callPresenceCheckMs: number;
    deviceHeartbeatMs: number;
    rateLimit: { burst: number; perSecond: number };
    /** Recoverable pushes per recipient (docs/hub.md#recovering-missed-pushes). */
    history: { windowMs: number; maxPushes: number; positionTtlMs: number };
  };
  limits: {
    windowSeconds: number;
    perIp: number;
    /** New engine.io sessions of the hub per client address and window (before any Socket.IO connect). */
    hubSessionsPerIp: number;
    signinPerIp: number;
    signinPerAccount: number;
    telemetryPerCredential: number;
    pageMaxTake: number;
    graphqlTimeBudgetMs: number;
  };
  /** The in-memory contact directory (decision 212): auto = on unless the server is a real MongoDB. */
  contactDirectory: {
    memory: Env['CONTACT_DIRECTORY_MEMORY'];
    maxTenants: number;
    maxEntries: number;
    rebuildSeconds: number;
  };
  seedDemo: boolean;
}

/** PEM files of the telemetry listener; `clientCaFile` set means clients must present a certificate it signed. */
export interface GrpcTlsFiles {
  certFile: string;
  keyFile: string;
  clientCaFile?: string;
}

function grpcTlsFiles(e: Env, problems: string[]): GrpcTlsFiles | undefined {
  if (!e.GRPC_TLS_CERT_FILE !== !e.GRPC_TLS_KEY_FILE)
    problems.push('GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE: set both or neither');
  if (e.GRPC_TLS_CLIENT_AUTH && !e.GRPC_TLS_CA_FILE)
    problems.push('GRPC_TLS_CA_FILE: required when GRPC_TLS_CLIENT_AUTH=true');
  if (e.GRPC_TLS_CLIENT_AUTH && !e.GRPC_TLS_CERT_FILE)
    problems.push('GRPC_TLS_CLIENT_AUTH: needs GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE');
  if (!e.GRPC_TLS_CERT_FILE || !e.GRPC_TLS_KEY_FILE) return undefined;
  return {
    certFile: e.GRPC_TLS_CERT_FILE,
    keyFile: e.GRPC_TLS_KEY_FILE,
    clientCaFile: e.GRPC_TLS_CLIENT_AUTH ? e.GRPC_TLS_CA_FILE : undefined,
  };
}

/** Thrown with every invalid setting at once, so an operator fixes them in one pass. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    Object.values(o).forEach(deepFreeze);
    Object.freeze(o);
  }
  return o;
}

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(Object.fromEntries(Object.entries(source).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  if (e.STORAGE_DRIVER === 's3' && !e.S3_ENDPOINT) problems.push('S3_ENDPOINT: required when STORAGE_DRIVER=s3');
  if (e.VCS_ADAPTER === 'livekit' && !(e.LIVEKIT_URL && e.LIVEKIT_API_KEY && e.LIVEKIT_API_SECRET)) {
    problems.push('LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET: required when VCS_ADAPTER=livekit');
  }
  if (e.OIDC_MODE === 'external' && !e.OIDC_ISSUER_TEMPLATE)
    problems.push('OIDC_ISSUER_TEMPLATE: required when OIDC_MODE=external');
  if (e.KEY_ENCRYPTION_KEY && e.KEY_ENCRYPTION_KEY_FILE)
    problems.push('KEY_ENCRYPTION_KEY, KEY_ENCRYPTION_KEY_FILE: set one, not both');
  if (e.KEY_ENCRYPTION_KEY_PREVIOUS && e.KEY_ENCRYPTION_KEY_PREVIOUS_FILE)
    problems.push('KEY_ENCRYPTION_KEY_PREVIOUS, KEY_ENCRYPTION_KEY_PREVIOUS_FILE: set one, not both');
  const grpcTls = grpcTlsFiles(e, problems);
  if (e.NODE_ENV === 'production') problems.push(...productionProblems(e));
  if (problems.length) throw new ConfigError(problems);

  const publicUrl = e.PUBLIC_URL ?? `http://127.0.0.1:${e.PORT}`;
  return deepFreeze({
    env: e.NODE_ENV,
    nodeId: e.NODE_ID ?? `node-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    roles: e.ROLES,
    http: {
      host: e.HOST,
      port: e.PORT,
      publicUrl,
      baseDomain: e.BASE_DOMAIN,
      bodyLimit: e.BODY_LIMIT,
      trustProxy: e.TRUST_PROXY,
      corsOrigins: e.CORS_ORIGINS,
      webApp: { signInRedirectUri: e.WEB_SIGNIN_REDIRECT_URI, loginApproveUrl: e.WEB_LOGIN_APPROVE_URL },
    },
    log: { level: e.LOG_LEVEL },
    mongo: {
      uri: e.MONGODB_URI,
      catalogDb: e.MONGODB_CATALOG_DB,
      tenantDbPrefix: e.MONGODB_TENANT_DB_PREFIX,
      timeoutMs: e.MONGODB_TIMEOUT_MS,
    },
    redis: { url: e.REDIS_URL, prefix: e.REDIS_PREFIX, cluster: parseRedisUrl(e.REDIS_URL).kind === 'cluster' },
    metrics: {
      host: e.METRICS_HOST,
      port: e.METRICS_PORT,
      token: e.METRICS_TOKEN,
      queueDashboardToken: e.QUEUE_DASHBOARD_TOKEN,
    },
    tracing: {
      endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: e.OTEL_SERVICE_NAME,
      sampleRatio: e.TRACING_SAMPLE_RATIO,
      exportDelayMs: e.TRACING_EXPORT_DELAY_MS,
    },
    storage: {
      driver: e.STORAGE_DRIVER,
      fsRoot: e.STORAGE_FS_ROOT,
      s3: {
        endpoint: e.S3_ENDPOINT,
        region: e.S3_REGION,
        bucket: e.S3_BUCKET,
        accessKeyId: e.S3_ACCESS_KEY_ID,
        secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        forcePathStyle: e.S3_FORCE_PATH_STYLE,
        requestTimeoutMs: e.S3_REQUEST_TIMEOUT_MS,
      },
    },
    auth: {
      provisioningCode: e.PROVISIONING_CODE,
      tokenIssuer: e.TOKEN_ISSUER,
      accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: e.REFRESH_TOKEN_TTL_SECONDS,
      refreshReuseGraceSeconds: e.REFRESH_REUSE_GRACE_SECONDS,
      idpTokenMaxLifetimeSeconds: e.IDP_TOKEN_MAX_LIFETIME_SECONDS,
      idpLogoutTokenMaxAgeSeconds: e.IDP_LOGOUT_TOKEN_MAX_AGE_SECONDS,
      accountSetupLinkTtlSeconds: e.ACCOUNT_SETUP_LINK_TTL_HOURS * 3600,
      oidc: {
        mode: e.OIDC_MODE,
        issuerTemplate: e.OIDC_ISSUER_TEMPLATE ?? `${publicUrl}/realms/{tenant}`,
        clientId: e.OIDC_CLIENT_ID,
        clientSecret: e.OIDC_CLIENT_SECRET,
        audience: e.OIDC_AUDIENCE,
        allowEmbedded: e.ALLOW_EMBEDDED_IDP,
        jwksCooldownSeconds: e.OIDC_JWKS_COOLDOWN_SECONDS,
      },
      keyEncryption: {
        key: e.KEY_ENCRYPTION_KEY,
        keyFile: e.KEY_ENCRYPTION_KEY_FILE,
        previous: e.KEY_ENCRYPTION_KEY_PREVIOUS,
        previousFile: e.KEY_ENCRYPTION_KEY_PREVIOUS_FILE,
        devKeyFile: e.NODE_ENV === 'production' ? undefined : DEV_KEK_FILE,
      },
    },
    grpc: { host: e.GRPC_HOST ?? e.HOST, port: e.GRPC_PORT, tls: grpcTls },
    vcs: {
      adapter: e.VCS_ADAPTER,
      livekit: { url: e.LIVEKIT_URL, apiKey: e.LIVEKIT_API_KEY, apiSecret: e.LIVEKIT_API_SECRET },
      embedded: { secret: e.VCS_EMBEDDED_SECRET, finalizeMs: e.VCS_EMBEDDED_FINALIZE_MS },
    },
    jobs: {
      concurrency: e.JOBS_CONCURRENCY,
      attempts: e.JOBS_ATTEMPTS,
      backoffMs: e.JOBS_BACKOFF_MS,
      lockMs: e.JOBS_LOCK_MS,
    },
    audit: { checkpointIntervalSeconds: e.AUDIT_CHECKPOINT_INTERVAL_SECONDS },
    webhooks: {
      allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      allowHttp: e.WEBHOOK_ALLOW_HTTP,
      allowLocalReceivers: e.WEBHOOK_ALLOW_LOCAL_RECEIVERS ?? e.SEED_DEMO,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      maxResponseBytes: e.WEBHOOK_MAX_RESPONSE_BYTES,
      pauseAfterFailures: e.WEBHOOK_PAUSE_AFTER_FAILURES,
      backoffMs: e.WEBHOOK_BACKOFF_MS,
      backoffMaxMs: e.WEBHOOK_BACKOFF_MAX_MS,
      retentionHours: e.WEBHOOK_RETENTION_HOURS,
      sweepMs: e.WEBHOOK_SWEEP_MS,
      secretGraceHours: e.WEBHOOK_SECRET_GRACE_HOURS,
    },
    actors: {
      shards: e.ACTOR_SHARDS,
      leaseMs: e.ACTOR_LEASE_MS,
      idleMs: e.ACTOR_IDLE_MS,
      retiredRetentionMs: e.ACTOR_RETIRED_RETENTION_SECONDS * 1000,
      connectionPollMs: e.ACTOR_CONNECTION_POLL_MS,
    },
    hub: {
      ringTimeoutMs: e.HUB_RING_TIMEOUT_MS,
      callPresenceCheckMs: e.HUB_CALL_PRESENCE_CHECK_MS,
      deviceHeartbeatMs: e.HUB_DEVICE_HEARTBEAT_MS,
      rateLimit: { burst: e.HUB_RATE_LIMIT_BURST, perSecond: e.HUB_RATE_LIMIT_PER_SECOND },
      history: {
        windowMs: e.HUB_PUSH_HISTORY_MS,
        maxPushes: e.HUB_PUSH_HISTORY_MAX,
        positionTtlMs: e.HUB_PUSH_POSITION_TTL_MS,
      },
    },
    limits: {
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      perIp: e.RATE_LIMIT_PER_IP,
      hubSessionsPerIp: e.RATE_LIMIT_HUB_SESSIONS_PER_IP,
      signinPerIp: e.RATE_LIMIT_SIGNIN_PER_IP,
      signinPerAccount: e.RATE_LIMIT_SIGNIN_PER_ACCOUNT,
      telemetryPerCredential: e.RATE_LIMIT_TELEMETRY_PER_CREDENTIAL,
      pageMaxTake: e.PAGE_MAX_TAKE,
      graphqlTimeBudgetMs: e.GRAPHQL_TIME_BUDGET_MS,
    },
    contactDirectory: {
      memory: e.CONTACT_DIRECTORY_MEMORY,
      maxTenants: e.CONTACT_DIRECTORY_MAX_TENANTS,
      maxEntries: e.CONTACT_DIRECTORY_MAX_ENTRIES,
      rebuildSeconds: e.CONTACT_DIRECTORY_REBUILD_SECONDS,
    },
    seedDemo: e.SEED_DEMO,
  } satisfies Config);
}
