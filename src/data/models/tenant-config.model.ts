import { Schema, type InferSchemaType } from 'mongoose';

/**
 * The tenant's runtime configuration (TenantConfig) and security rules, one document with `_id: 'tenant'`.
 * Defaults live in src/data/tenant-defaults.ts and are written by the seed migration.
 */
export const TenantConfigSchema = new Schema(
  {
    _id: { type: String, default: 'tenant' },
    displayName: { type: String, required: true },
    locale: { type: String, default: 'en' },
    timezone: { type: String, default: 'UTC' },
    uploads: {
      maxBytes: { type: Number, required: true },
      allowedExtensions: { type: [String], required: true },
      maxImagePixels: { type: Number, required: true },
    },
    security: {
      pin: {
        minLength: { type: Number, required: true },
        maxLength: { type: Number, required: true },
        digitsOnly: { type: Boolean, required: true },
        historyCount: { type: Number, required: true },
      },
      lockout: {
        maxAttempts: { type: Number, required: true },
        lockoutSeconds: { type: Number, required: true },
        // Added later: tenants migrated before them read the defaults (SecurityRulesService).
        maxLockoutSeconds: { type: Number },
        maxFailuresPerDay: { type: Number },
      },
      session: {
        accessTokenTtlSeconds: { type: Number, required: true },
        refreshTokenTtlSeconds: { type: Number, required: true },
        offlineTokenTtlDays: { type: Number, required: true },
        maxSessionsPerUser: { type: Number, required: true },
      },
      loginCodeTtlSeconds: { type: Number, required: true },
    },
    features: {
      recording: { type: Boolean, default: true },
      chat: { type: Boolean, default: true },
      rapidConnect: { type: Boolean, default: true },
      guestJoin: { type: Boolean, default: true },
    },
    meetings: {
      ringTimeoutSeconds: { type: Number, default: 45 },
      heartbeatSeconds: { type: Number, default: 15 },
      /** Waiting room (decision 870); tenants stored before it read the defaults (AdminService). */
      waitingRoom: { type: Boolean },
      waitingRoomAutoAdmitInvited: { type: Boolean },
      waitingRoomExpirySeconds: { type: Number },
      /** Recording consent (decision 910): off, all (every person present) or patients; tenants stored before it read the defaults. */
      recordingConsent: { type: String, enum: ['off', 'all', 'patients'] },
      recordingConsentTimeoutSeconds: { type: Number },
    },
    cors: { allowedOrigins: { type: [String], default: [] } },
    /** The tenant's own web app serving the sign-in callback and the QR approval page (decision 330); unset = the deployment's. */
    webApp: { signInRedirectUri: String, loginApproveUrl: String },
    /** What a patient sees of the directory: their care team (default) or every user of the tenant (decision 230). */
    directory: { patientScope: { type: String, enum: ['careTeam', 'tenant'], default: 'careTeam' } },
    /**
     * Revision: every path-by-path write adds one, so a compare-and-set (TenantConfigRepository.setPaths)
     * sees any write since its read; updatedAt cannot, two writes can carry the same millisecond.
     */
    rev: { type: Number },
  },
  { timestamps: true },
);

export type TenantConfigDoc = InferSchemaType<typeof TenantConfigSchema>;
