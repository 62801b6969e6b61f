import { z } from 'zod';

/**
 * What a tenant administrator may change of the tenant's configuration and security rules (decision 950):
 * every field optional, each within strict bounds, unknown fields refused (named in the problem).
 */
const section = <T extends z.ZodRawShape>(shape: T) => z.strictObject(shape).partial();
const int = (min: number, max: number) => z.number().int().min(min).max(max);

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `scheme://host[:port]` exactly as a browser sends it: https, or http for a local development host. */
export const BrowserOrigin = z
  .string()
  .max(300)
  .refine((s) => {
    if (s.includes('*')) return false;
    try {
      const u = new URL(s);
      if (u.origin !== s) return false;
      return u.protocol === 'https:' || (u.protocol === 'http:' && LOCAL_HOSTS.has(u.hostname));
    } catch {
      return false;
    }
  }, 'must be an exact origin scheme://host[:port] (lowercase, https; http only for localhost; no wildcard, path or trailing slash)');

const HttpsUrl = z
  .string()
  .max(2000)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'https:' && !u.username && !u.password && !u.hash;
    } catch {
      return false;
    }
  }, 'must be an https URL without credentials or fragment');

const TimeZone = z
  .string()
  .max(64)
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone such as Europe/Berlin');

export const TenantConfigPatch = section({
  displayName: z.string().trim().min(1).max(200),
  locale: z
    .string()
    .max(35)
    .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en or de-CH'),
  timezone: TimeZone,
  uploads: section({
    maxBytes: int(1024, 2 * 1024 ** 3).describe('bytes, 1 KiB to 2 GiB'),
    allowedExtensions: z
      .array(z.string().regex(/^[a-z0-9]{1,10}$/, 'must be a lowercase extension without the dot'))
      .min(1)
      .max(100)
      .refine((a) => new Set(a).size === a.length, 'must not repeat an extension'),
    maxImagePixels: int(10_000, 500_000_000),
  }),
  features: section({
    recording: z.boolean(),
    chat: z.boolean(),
    rapidConnect: z.boolean(),
    guestJoin: z.boolean(),
  }),
  meetings: section({
    ringTimeoutSeconds: int(5, 600),
    heartbeatSeconds: int(5, 120),
    waitingRoom: z.boolean(),
    waitingRoomAutoAdmitInvited: z.boolean(),
    waitingRoomExpirySeconds: int(60, 86_400),
    recordingConsent: z.enum(['off', 'all', 'patients']),
    recordingConsentTimeoutSeconds: int(10, 3600),
  }),
  cors: section({
    allowedOrigins: z
      .array(BrowserOrigin)
      .max(50)
      .refine((a) => new Set(a).size === a.length, 'must not repeat an origin'),
  }),
  webApp: section({
    signInRedirectUri: HttpsUrl.nullable().describe("null: the deployment's setting"),
    loginApproveUrl: HttpsUrl.nullable().describe("null: the service's own page"),
  }),
  directory: section({ patientScope: z.enum(['careTeam', 'tenant']) }),
});
export type TenantConfigPatch = z.infer<typeof TenantConfigPatch>;

export const SecurityRulesPatch = section({
  pin: section({
    minLength: int(4, 32),
    maxLength: int(4, 64),
    digitsOnly: z.boolean(),
    historyCount: int(0, 24),
  }),
  lockout: section({
    maxAttempts: int(1, 100),
    lockoutSeconds: int(1, 86_400),
    maxLockoutSeconds: int(1, 604_800),
    maxFailuresPerDay: int(1, 1000),
  }),
  session: section({
    accessTokenTtlSeconds: int(60, 3600),
    refreshTokenTtlSeconds: int(300, 2_592_000),
    offlineTokenTtlDays: int(1, 365),
    maxSessionsPerUser: int(1, 1000),
  }),
  loginCodeTtlSeconds: int(30, 900),
});
export type SecurityRulesPatch = z.infer<typeof SecurityRulesPatch>;
