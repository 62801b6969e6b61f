import type { Connection, Model, Schema } from 'mongoose';
import { UserSchema, sortKeys, type UserDoc } from './models/user.model.js';
import { RoleSchema, type RoleDoc } from './models/role.model.js';
import { TenantConfigSchema, type TenantConfigDoc } from './models/tenant-config.model.js';
import { EventSchema, type EventDoc } from './models/event.model.js';
import { PeripheralTypeSchema, type PeripheralTypeDoc } from './models/peripheral-type.model.js';
import { DeviceSchema, type DeviceDoc } from './models/device.model.js';
import {
  DevicePairingSchema,
  DeviceRegistrationSchema,
  type DevicePairingDoc,
  type DeviceRegistrationDoc,
} from './models/device-registration.model.js';
import { GroupSchema, type GroupDoc } from './models/group.model.js';
import { FavouriteSchema, type FavouriteDoc } from './models/favourite.model.js';
import { NoticeSchema, NoticeAckSchema, type NoticeDoc, type NoticeAckDoc } from './models/notice.model.js';
import {
  MediaFileSchema,
  FileShareSchema,
  MediaGrantSchema,
  type MediaFileDoc,
  type FileShareDoc,
  type MediaGrantDoc,
} from './models/media-file.model.js';
import { PendingUserSchema, ImportSchema, type PendingUserDoc, type ImportDoc } from './models/pending-user.model.js';
import { SessionSchema, type SessionDoc } from './models/session.model.js';
import { LoginCodeSchema, type LoginCodeDoc } from './models/login-code.model.js';
import { OfflineTokenSchema, type OfflineTokenDoc } from './models/offline-token.model.js';
import { AuditSchema, AuditCheckpointSchema, type AuditDoc, type AuditCheckpointDoc } from './models/audit.model.js';
import {
  TelemetryRecordSchema,
  ConferenceBindingSchema,
  ParticipantLogSchema,
  type TelemetryRecordDoc,
  type ConferenceBindingDoc,
  type ParticipantLogDoc,
} from './models/telemetry.model.js';
import { CallRecordSchema, type CallRecordDoc } from './models/call-record.model.js';
import { withReadDefaults } from './read-defaults.js';
import { AccountSetupSchema, type AccountSetupDoc } from './models/account-setup.model.js';
import {
  WebhookSubscriptionSchema,
  WebhookEventSchema,
  WebhookAttemptSchema,
  type WebhookSubscriptionDoc,
  type WebhookEventDoc,
  type WebhookAttemptDoc,
} from './models/webhook.model.js';

/** Every collection of a tenant database: model name -> (schema, collection). */
const DEFINITIONS = {
  User: [UserSchema, 'users'],
  Role: [RoleSchema, 'roles'],
  TenantConfig: [TenantConfigSchema, 'settings'],
  Event: [EventSchema, 'events'],
  PeripheralType: [PeripheralTypeSchema, 'peripheral_types'],
  Device: [DeviceSchema, 'devices'],
  DeviceRegistration: [DeviceRegistrationSchema, 'device_registrations'],
  DevicePairing: [DevicePairingSchema, 'device_pairings'],
  Group: [GroupSchema, 'groups'],
  Favourite: [FavouriteSchema, 'favourites'],
  Notice: [NoticeSchema, 'notices'],
  NoticeAck: [NoticeAckSchema, 'notice_acks'],
  MediaFile: [MediaFileSchema, 'media_files'],
  FileShare: [FileShareSchema, 'file_shares'],
  MediaGrant: [MediaGrantSchema, 'media_grants'],
  PendingUser: [PendingUserSchema, 'pending_users'],
  Import: [ImportSchema, 'imports'],
  Session: [SessionSchema, 'sessions'],
  LoginCode: [LoginCodeSchema, 'login_codes'],
  OfflineToken: [OfflineTokenSchema, 'offline_tokens'],
  Audit: [AuditSchema, 'audit_trail'],
  AuditCheckpoint: [AuditCheckpointSchema, 'audit_checkpoints'],
  TelemetryRecord: [TelemetryRecordSchema, 'telemetry_records'],
  ConferenceBinding: [ConferenceBindingSchema, 'conference_bindings'],
  ParticipantLog: [ParticipantLogSchema, 'participant_logs'],
  CallRecord: [CallRecordSchema, 'call_records'],
  AccountSetup: [AccountSetupSchema, 'account_setups'],
  WebhookSubscription: [WebhookSubscriptionSchema, 'webhook_subscriptions'],
  WebhookEvent: [WebhookEventSchema, 'webhook_events'],
  WebhookAttempt: [WebhookAttemptSchema, 'webhook_attempts'],
} as const satisfies Record<string, readonly [Schema, string]>;

export interface TenantModels {
  User: Model<UserDoc>;
  Role: Model<RoleDoc>;
  TenantConfig: Model<TenantConfigDoc>;
  Event: Model<EventDoc>;
  PeripheralType: Model<PeripheralTypeDoc>;
  Device: Model<DeviceDoc>;
  DeviceRegistration: Model<DeviceRegistrationDoc>;
  DevicePairing: Model<DevicePairingDoc>;
  Group: Model<GroupDoc>;
  Favourite: Model<FavouriteDoc>;
  Notice: Model<NoticeDoc>;
  NoticeAck: Model<NoticeAckDoc>;
  MediaFile: Model<MediaFileDoc>;
  FileShare: Model<FileShareDoc>;
  MediaGrant: Model<MediaGrantDoc>;
  PendingUser: Model<PendingUserDoc>;
  Import: Model<ImportDoc>;
  Session: Model<SessionDoc>;
  LoginCode: Model<LoginCodeDoc>;
  OfflineToken: Model<OfflineTokenDoc>;
  Audit: Model<AuditDoc>;
  AuditCheckpoint: Model<AuditCheckpointDoc>;
  TelemetryRecord: Model<TelemetryRecordDoc>;
  ConferenceBinding: Model<ConferenceBindingDoc>;
  ParticipantLog: Model<ParticipantLogDoc>;
  CallRecord: Model<CallRecordDoc>;
  AccountSetup: Model<AccountSetupDoc>;
  WebhookSubscription: Model<WebhookSubscriptionDoc>;
  WebhookEvent: Model<WebhookEventDoc>;
  WebhookAttempt: Model<WebhookAttemptDoc>;
}

// Lean reads get the schema's defaults (./read-defaults.ts), before any model is compiled from these schemas.
// A user written before the sort keys existed gets them from the display name.
withReadDefaults(UserSchema, (u) => {
  if (typeof u.displayName === 'string' && (u.sortName === undefined || u.initial === undefined))
    Object.assign(u, {
      ...sortKeys(u.displayName),
      ...(u.sortName !== undefined ? { sortName: u.sortName } : {}),
      ...(u.initial !== undefined ? { initial: u.initial } : {}),
    });
});
for (const [schema] of Object.values(DEFINITIONS)) withReadDefaults(schema);

export const TENANT_MODEL_NAMES = Object.keys(DEFINITIONS) as (keyof TenantModels)[];

export function tenantModels(conn: Connection): TenantModels {
  const out: Record<string, Model<unknown>> = {};
  for (const [name, [schema, collection]] of Object.entries(DEFINITIONS)) {
    out[name] = conn.models[name] ?? conn.model(name, schema, collection);
  }
  return out as unknown as TenantModels;
}
