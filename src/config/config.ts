import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KeyEncryptionSettings } from './key-encryption.js';
import { EnvSchema, type Env, type Role } from './env-schema.js';
import { parseRedisUrl } from './redis-url.js';
import { productionProblems } from './production-checks.js';

/** The development key-encryption key, generated once under the project's .local/ (never in production). */
const DEV_KEK_FILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '.local',
  'key-encryption-key',
);

/** The validated, frozen configuration handed to the composition root. */
export interface Config {
  env: Env['NODE_ENV'];
  nodeId: string;
  roles: readonly Role[];
  http: {
    host: string;
    port: number;
    /** The public port's accept queue (`listen` backlog; the kernel caps it at net.core.somaxconn). */
    listenBacklog: number;
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
    /** STORAGE_FS_SYNC_BYTES (decision 1190). */
    fsSyncBytes: number;
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
  actors: {
    shards: number;
    leaseMs: number;
    idleMs: number;
    retiredRetentionMs: number;
    connectionPollMs: number;
    slowTurnMs: number;
    deadlineSkewMs: number;
    /** Direct links between nodes (decision 1186); false: every ask between nodes by the Redis lists. */
    link: { host: string; port: number; advertise?: string } | false;
  };
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
  /** The care-team cache in Redis (decision 1132): entries' lifetime, 0 = off (writes still retire entries). */
  careTeamCache: { ttlSeconds: number };
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
      listenBacklog: e.HTTP_LISTEN_BACKLOG,
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
      fsSyncBytes: e.STORAGE_FS_SYNC_BYTES,
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
      slowTurnMs: e.ACTOR_SLOW_TURN_MS,
      deadlineSkewMs: e.ACTOR_DEADLINE_SKEW_MS,
      link:
        e.ACTOR_LINK === 'off'
          ? false
          : {
              host: e.ACTOR_LINK_HOST,
              port: e.ACTOR_LINK_PORT,
              ...(e.ACTOR_LINK_ADVERTISE ? { advertise: e.ACTOR_LINK_ADVERTISE } : {}),
            },
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
    careTeamCache: { ttlSeconds: e.CARE_TEAM_CACHE_TTL_SECONDS },
    seedDemo: e.SEED_DEMO,
  } satisfies Config);
}
