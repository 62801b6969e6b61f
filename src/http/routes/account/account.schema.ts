import { z } from 'zod';

const code = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z0-9]{6,16}$/, 'not a login code');
const secret = z.string().min(16).max(200);
const objectId = z.string().regex(/^[a-f0-9]{24}$/i, 'not a user id');

/** LoginRequest: one of the sign-in methods (docs/auth.md). */
export const LoginRequest = z.discriminatedUnion('method', [
  z.object({
    method: z.literal('code'),
    /** The redirect URL the browser landed on (with code, state and iss). */
    callbackUrl: z.url().max(4000),
    codeVerifier: z.string().min(43).max(128),
    state: z.string().max(500).optional(),
  }),
  z.object({ method: z.literal('qr'), code, pollSecret: secret }),
  z.object({ method: z.literal('pin'), username: z.string().trim().min(1).max(200), pin: z.string().min(1).max(64) }),
]);
export type LoginRequest = z.infer<typeof LoginRequest>;

/** GenerateQRCodeCommand (query of GET /api/account/qrCode). */
export const GenerateQRCodeCommand = z.object({ deviceName: z.string().trim().max(100).optional() });
export const ExtendLoginCodeCommand = z.object({ code, pollSecret: secret });
export const ApproveLoginCodeCommand = z.object({ code });
export const RefuseLoginCodeCommand = z.object({ code });
export const LoginCodeQuery = z.object({ code });
export const LogoutParams = z.object({ userId: objectId });
/** ResetPinCommand: own PIN (`newPin`), or another user's (`userId`, optional `newPin`; absent clears it). */
export const ResetPinCommand = z.object({ userId: objectId.optional(), newPin: z.string().min(1).max(64).optional() });
export const OfflineTokenQuery = z.object({
  purpose: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only'),
});
export const RevokeOfflineTokenCommand = z.object({ id: z.string().regex(/^[a-f0-9]{24}$/i, 'not a token id') });
export const OfflineLoginRequest = z.object({ token: z.string().min(10).max(200) });
export const RefreshRequest = z.object({ refreshToken: z.string().min(10).max(300) });
export const ImpersonateCommand = z
  .object({ userId: objectId.optional(), username: z.string().trim().min(1).max(200).optional() })
  .refine((v) => Boolean(v.userId) !== Boolean(v.username), {
    message: 'give exactly one of userId or username',
    path: ['userId'],
  });
export const OrgRequest = z.object({ org: z.string().max(100).optional() }).optional();
export const AssignRoleCommand = z.object({ userId: objectId, role: z.string().trim().toLowerCase().min(1).max(64) });
/** Back-channel logout (form-encoded, OpenID Connect Back-Channel Logout 1.0): the realm's signed logout token. */
export const BackchannelLogoutRequest = z.object({ logout_token: z.string().min(10).max(8000) });

const IsoDateTime = z.string().describe('ISO 8601 date-time');

/** LoginMeta: the session tokens, answered by refresh and (with the user) by every sign-in. */
export const LoginMeta = z.object({
  tokenType: z.literal('Bearer'),
  accessToken: z.string(),
  expiresIn: z.number().int().describe('seconds until the access token expires'),
  expiresAt: IsoDateTime,
  refreshToken: z.string(),
  refreshExpiresAt: IsoDateTime,
  sessionId: z.string(),
});
/** LoginResponse: the session plus who signed in and what they may do. */
export const LoginResponse = LoginMeta.extend({
  user: z.object({ id: z.string(), username: z.string(), displayName: z.string(), role: z.string(), kind: z.string() }),
  permissions: z.array(z.string()),
  impersonatedBy: z.string().optional(),
  purpose: z.string().optional(),
});
export const GeneratedLoginCode = z.object({
  code: z.string(),
  pollSecret: z.string(),
  expiresAt: IsoDateTime,
  pollIntervalSeconds: z.number().int(),
  approveUrl: z.string(),
  qrCode: z.string().describe('PNG data URL of the QR code encoding approveUrl'),
});
export const ExtendedLoginCode = z.object({ code: z.string(), expiresAt: IsoDateTime });
export const ApprovedLoginCode = z.object({
  code: z.string(),
  status: z.literal('approved'),
  deviceName: z.string().optional(),
});
export const RefusedLoginCode = z.object({
  code: z.string(),
  status: z.literal('refused'),
  deviceName: z.string().optional(),
});
/** What the approval page shows before the user decides (never the poll secret). */
export const LoginCodeInfo = z.object({
  code: z.string(),
  status: z.enum(['pending', 'approved', 'redeemed', 'refused', 'expired']),
  deviceName: z.string().optional(),
  requestedFrom: z
    .object({ ip: z.string().optional(), userAgent: z.string().optional() })
    .describe('client address and User-Agent of the device that asked for the code'),
  requestedAt: IsoDateTime.optional(),
  expiresAt: IsoDateTime,
});
export const LogoutResult = z.object({ revokedSessions: z.number().int() });
export const PinResult = z.object({ userId: z.string(), hasPin: z.boolean() });
export const IssuedOfflineToken = z.object({
  id: z.string(),
  token: z.string(),
  purpose: z.string(),
  permissions: z.array(z.string()),
  expiresAt: IsoDateTime,
});
export const RevokedOfflineToken = z.object({
  id: z.string(),
  revoked: z.literal(true),
  sessionsRevoked: z.number().int(),
});
export const OrgInfo = z.object({
  tenant: z.string(),
  displayName: z.string(),
  realm: z.object({
    issuer: z.string(),
    clientId: z.string(),
    audience: z.string(),
    scopes: z.array(z.string()),
    redirectUri: z
      .string()
      .describe(
        "the redirect URI to send to the realm: the tenant's web app (TenantConfig webApp, WEB_SIGNIN_REDIRECT_URI) or the service's own /auth/callback",
      ),
  }),
});
export const RoleAssigned = z.object({ userId: z.string(), role: z.string() });
export const Jwks = z.object({ keys: z.array(z.object({ kty: z.string(), kid: z.string().optional() }).loose()) });
