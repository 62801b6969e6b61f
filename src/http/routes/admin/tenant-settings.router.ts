import { z } from 'zod';
import { op, type RouteGroup } from '../route-spec.js';
import { SecurityRulesPatch, TenantConfigPatch } from '../../../core/tenants/tenant-settings.schema.js';

const PinPolicy = z.object({
  minLength: z.number().int(),
  maxLength: z.number().int(),
  digitsOnly: z.boolean(),
  historyCount: z.number().int(),
});
const LockoutRules = z.object({
  maxAttempts: z.number().int(),
  lockoutSeconds: z.number().int(),
  maxLockoutSeconds: z.number().int(),
  maxFailuresPerDay: z.number().int(),
});
const SessionRules = z.object({
  accessTokenTtlSeconds: z.number().int(),
  refreshTokenTtlSeconds: z.number().int(),
  offlineTokenTtlDays: z.number().int(),
  maxSessionsPerUser: z.number().int(),
});
/** The tenant's security rules as GraphQL `tenantSecurityRules` presents them. */
export const SecurityRulesOut = z.object({
  pin: PinPolicy,
  lockout: LockoutRules,
  session: SessionRules,
  loginCodeTtlSeconds: z.number().int(),
});

/** The whole TenantConfig (the fields GraphQL `tenantConfig` presents, and those only REST changes). */
export const TenantConfigOut = z.object({
  tenant: z.string(),
  displayName: z.string(),
  locale: z.string(),
  timezone: z.string(),
  uploads: z.object({
    maxBytes: z.number().int(),
    allowedExtensions: z.array(z.string()),
    maxImagePixels: z.number().int(),
  }),
  features: z.object({ recording: z.boolean(), chat: z.boolean(), rapidConnect: z.boolean(), guestJoin: z.boolean() }),
  meetings: z.object({
    ringTimeoutSeconds: z.number().int(),
    heartbeatSeconds: z.number().int(),
    waitingRoom: z.boolean(),
    waitingRoomAutoAdmitInvited: z.boolean(),
    waitingRoomExpirySeconds: z.number().int(),
    recordingConsent: z.enum(['off', 'all', 'patients']),
    recordingConsentTimeoutSeconds: z.number().int(),
  }),
  cors: z.object({ allowedOrigins: z.array(z.string()) }),
  webApp: z.object({ signInRedirectUri: z.string().nullable(), loginApproveUrl: z.string().nullable() }),
  directory: z.object({ patientScope: z.enum(['careTeam', 'tenant']) }),
});

/**
 * /api/admin/tenantConfig and /api/admin/securityRules: tenant administrators change the tenant's
 * configuration and security rules, field by field, audited (decision 950).
 */
export const adminTenantSettingsRoutes: RouteGroup = {
  base: '/api/admin',
  tag: 'Tenant configuration',
  description: "The tenant's configuration and security rules, changed by its administrators",
  routes: [
    op({
      operationId: 'admin.configureTenant',
      requires: 'tenant:admin',
      note: 'audited as tenant.configure',
      method: 'patch',
      path: '/tenantConfig',
      body: TenantConfigPatch,
      response: TenantConfigOut,
      summary:
        'Change the given TenantConfig fields only (uploads, features, meetings, CORS origins, web app, directory); answers the whole configuration',
      description:
        "Audited as `tenant.configure` with each changed path's old and new value. This node applies the change at once; other nodes within 10 s (allowed origins, patient scope, web app pages).",
      example: {
        request: { uploads: { maxBytes: 20_971_520 }, cors: { allowedOrigins: ['https://app.hospital.example'] } },
      },
      handle: async (s, { p, req, body }) => {
        const { security: _security, _id, ...config } = await s.tenantSettings.configure(p, req.tenant!, body);
        return config;
      },
    }),
    op({
      operationId: 'admin.changeSecurityRules',
      requires: 'tenant:admin',
      note: 'audited as security.rules.change',
      method: 'patch',
      path: '/securityRules',
      body: SecurityRulesPatch,
      response: SecurityRulesOut,
      summary:
        'Change the given security rules only (PIN policy, lockout, session lifetimes, login-code lifetime); answers the whole rules',
      description:
        "Audited as `security.rules.change` with each changed path's old and new value. This node applies the change at once; other nodes within 5 s.",
      example: { request: { pin: { minLength: 6 }, lockout: { maxAttempts: 3 } } },
      handle: (s, { p, req, body }) => s.tenantSettings.changeSecurityRules(p, req.tenant!.name, body),
    }),
  ],
};
