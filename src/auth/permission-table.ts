import type { Permission } from '../kernel/permissions.js';

/**
 * What an operation requires: a permission, `authenticated` (any signed-in principal, the operation
 * checks ownership itself) or `public` (no token; the operation authenticates by other means such as
 * a refresh token, a login code or the provisioning code).
 */
export type Requirement = Permission | 'authenticated' | 'public';
export type Transport = 'rest' | 'graphql' | 'hub';

export interface OperationEntry {
  transport: Transport;
  /** REST: `METHOD /path` exactly as SPEC.md names it; GraphQL: operation name; hub: method name. */
  name: string;
  requires: Requirement;
  note?: string;
}

/**
 * The one table of every REST endpoint, GraphQL operation and hub method and what it needs.
 * Transports look their operation up with `permissionFor(id)`; docs/permissions.md is rendered from it.
 */
export const OPERATIONS = {
  // Account
  'account.login': {
    transport: 'rest',
    name: 'POST /api/account/login',
    requires: 'public',
    note: 'authorization code + PKCE, approved QR code, or device PIN',
  },
  'account.extendLoginCode': {
    transport: 'rest',
    name: 'POST /api/account/extendLoginCode',
    requires: 'public',
    note: 'proved by the login code poll secret',
  },
  'account.qrCode': { transport: 'rest', name: 'GET /api/account/qrCode', requires: 'public' },
  'account.approveLoginCode': {
    transport: 'rest',
    name: 'POST /api/account/approveLoginCode',
    requires: 'authenticated',
    note: 'a signed-in web user approves a QR login code for themselves',
  },
  'account.loginCode': {
    transport: 'rest',
    name: 'GET /api/account/loginCode',
    requires: 'authenticated',
    note: 'the approval page reads which device asks (the code alone, as shown by the QR image)',
  },
  'account.refuseLoginCode': {
    transport: 'rest',
    name: 'POST /api/account/refuseLoginCode',
    requires: 'authenticated',
    note: 'a signed-in web user refuses a QR login code; the polling device gets login_code_refused',
  },
  'account.logout': {
    transport: 'rest',
    name: 'POST /api/account/{userId}/logout',
    requires: 'authenticated',
    note: "own sessions; another user's needs users:manage",
  },
  'account.resetPin': {
    transport: 'rest',
    name: 'POST /api/account/resetPin',
    requires: 'profile:write',
    note: "another user's PIN needs users:manage",
  },
  'account.offlineToken': { transport: 'rest', name: 'POST /api/account/offlineToken', requires: 'account:offline' },
  'account.revokeOfflineToken': {
    transport: 'rest',
    name: 'POST /api/account/revokeOfflineToken',
    requires: 'account:offline',
  },
  'account.offlineLogin': {
    transport: 'rest',
    name: 'POST /api/account/offlineLogin',
    requires: 'public',
    note: 'proved by the offline token',
  },
  'account.refresh': {
    transport: 'rest',
    name: 'POST /api/account/refresh',
    requires: 'public',
    note: 'proved by the refresh token',
  },
  'account.impersonate': { transport: 'rest', name: 'POST /api/account/impersonate', requires: 'account:impersonate' },
  'account.backchannelLogout': {
    transport: 'rest',
    name: 'POST /api/account/backchannel-logout',
    requires: 'public',
    note: "OIDC back-channel logout from the realm; proved by the logout token signed with the realm's key",
  },
  'account.org': { transport: 'rest', name: 'POST /api/account/org', requires: 'public' },
  'account.assignRole': { transport: 'rest', name: 'POST /api/account/assignRole', requires: 'users:manage' },
  'account.jwks': {
    transport: 'rest',
    name: 'GET /.well-known/jwks.json',
    requires: 'public',
    note: 'public keys of internal tokens',
  },
  // Media and files
  'media.upload': { transport: 'rest', name: 'POST /api/media/upload', requires: 'media:upload' },
  'media.download': {
    transport: 'rest',
    name: 'GET /api/media/download/{tenant}/{hash}',
    requires: 'media:read',
    note: 'and the media access rule: owner, member of the event or call of the file, or tenant:admin',
  },
  'media.downloadAlias': {
    transport: 'rest',
    name: 'GET /media/download/{tenant}/{hash}',
    requires: 'media:read',
    note: 'and the media access rule: owner, member of the event or call of the file, or tenant:admin',
  },
  'media.syncFiles': {
    transport: 'rest',
    name: 'POST /api/media/syncFiles',
    requires: 'media:upload',
    note: 'queued mobile uploads',
  },
  'media.thumbnail': {
    transport: 'rest',
    name: 'GET /api/media/thumbnail/{tenant}/{hash}',
    requires: 'media:read',
    note: 'image thumbnail once the thumbnail job produced it, and the media access rule: owner, member of the event or call of the file, or tenant:admin',
  },
  'files.shared': {
    transport: 'rest',
    name: 'GET /api/files/shared/{filePath}',
    requires: 'media:read',
    note: 'the share path is the grant',
  },
  'files.container': {
    transport: 'rest',
    name: 'GET /files/{tenantId}/{container}/{*path}',
    requires: 'media:read',
    note: 'media and thumbnails: the media access rule; recordings: tenant:admin; assets: any reader',
  },
  // Tenant
  'tenant.ping': { transport: 'rest', name: 'GET /api/tenant/ping', requires: 'public' },
  'tenant.startRecording': {
    transport: 'rest',
    name: 'GET /api/tenant/startrecording',
    requires: 'meetings:record',
    note: 'a meeting actor turn: members of the running meeting or hosts of the event; attributed to the caller; `userId` naming someone else needs tenant:admin (audited as acting for them)',
  },
  'tenant.stopRecording': {
    transport: 'rest',
    name: 'GET /api/tenant/stoprecording',
    requires: 'meetings:record',
    note: 'a meeting actor turn: members of the meeting or hosts of the event; stops whatever records',
  },
  // Admin helpers
  'admin.lastSeenContact': {
    transport: 'rest',
    name: 'GET /api/admin/lastSeen/{contactId}',
    requires: 'presence:read',
  },
  'admin.lastSeenUser': {
    transport: 'rest',
    name: 'GET /api/admin/lastSeen/{tenant}/{username}',
    requires: 'presence:read',
  },
  'admin.isOnline': {
    transport: 'rest',
    name: 'GET /api/admin/isOnline/{tenant}/{username}',
    requires: 'presence:read',
  },
  'admin.user': { transport: 'rest', name: 'GET /api/admin/user/{tenant}/{username}', requires: 'presence:read' },
  'audit.list': { transport: 'rest', name: 'GET /api/admin/audit', requires: 'audit:read' },
  'audit.verify': {
    transport: 'rest',
    name: 'GET /api/admin/audit/verify',
    requires: 'audit:read',
    note: 'signs the new entries first, as the periodic checkpoint would (decision 1020)',
  },
  'audit.checkpoints': { transport: 'rest', name: 'GET /api/admin/audit/checkpoints', requires: 'audit:read' },
  'audit.checkpoint': {
    transport: 'rest',
    name: 'POST /api/admin/audit/checkpoint',
    requires: 'tenant:admin',
    note: "signs the entries written since the last checkpoint with the service's key",
  },
  'audit.export': {
    transport: 'rest',
    name: 'GET /api/admin/audit/export',
    requires: 'audit:read',
    note: 'sealed at export time; signs the new entries first (decision 1020)',
  },
  'audit.fhir': { transport: 'rest', name: 'GET /api/admin/audit/fhir', requires: 'audit:read' },
  'audit.fhirBulk': { transport: 'rest', name: 'GET /api/admin/audit/fhir/bulk', requires: 'audit:read' },
  'admin.migrate': {
    transport: 'rest',
    name: 'POST /api/admin/migrate/{tenantName}',
    requires: 'public',
    note: 'proved by the provisioning code',
  },
  // Bulk user upload
  'uploads.pendingUsers': { transport: 'rest', name: 'POST /api/uploads/pendingUsers', requires: 'users:import' },
  'uploads.imports': { transport: 'rest', name: 'GET /api/uploads/pendingUsers', requires: 'users:import' },
  'admin.configureTenant': {
    transport: 'rest',
    name: 'PATCH /api/admin/tenantConfig',
    requires: 'tenant:admin',
    note: 'audited as tenant.configure',
  },
  'admin.changeSecurityRules': {
    transport: 'rest',
    name: 'PATCH /api/admin/securityRules',
    requires: 'tenant:admin',
    note: 'audited as security.rules.change',
  },
  'admin.pendingUsers': { transport: 'rest', name: 'GET /api/admin/pendingUsers', requires: 'users:import' },
  'admin.activatePendingUsers': {
    transport: 'rest',
    name: 'POST /api/admin/pendingUsers/activate',
    requires: 'users:manage',
    note: 'makes accounts with the roles the sheet named, so it needs the right to assign roles',
  },
  'uploads.pendingUsersStatus': {
    transport: 'rest',
    name: 'GET /api/uploads/pendingUsers/{importId}',
    requires: 'users:import',
    note: 'progress and per-row error report of an import',
  },
  // Contacts
  'contacts.get': { transport: 'rest', name: 'GET /api/contacts/get', requires: 'contacts:read' },
  'contacts.groupUsers': {
    transport: 'rest',
    name: 'GET /api/contacts/group/users/{groupId}',
    requires: 'contacts:read',
  },
  'contacts.me': { transport: 'rest', name: 'GET /api/contacts/me', requires: 'profile:read' },
  'contacts.setFavourite': { transport: 'rest', name: 'POST /api/contacts/setFavourite', requires: 'contacts:read' },
  'contacts.update': { transport: 'rest', name: 'POST /api/contacts/update', requires: 'profile:write' },
  'contacts.groupCreate': { transport: 'rest', name: 'POST /api/contacts/group/create', requires: 'groups:manage' },
  'contacts.groupRename': { transport: 'rest', name: 'POST /api/contacts/group/rename', requires: 'groups:manage' },
  'contacts.groupAdd': { transport: 'rest', name: 'POST /api/contacts/group/add', requires: 'groups:manage' },
  'contacts.groupRemove': { transport: 'rest', name: 'POST /api/contacts/group/remove', requires: 'groups:manage' },
  'contacts.notificationSeen': {
    transport: 'rest',
    name: 'POST /api/contacts/notificationSeen/{noticeId}',
    requires: 'notices:read',
  },
  // Events
  'events.list': { transport: 'rest', name: 'GET /api/events/get', requires: 'events:read' },
  'events.get': { transport: 'rest', name: 'GET /api/events/get/{eventId}', requires: 'events:read' },
  'events.getParticipants': {
    transport: 'rest',
    name: 'GET /api/events/getParticipants/{eventId}',
    requires: 'events:read',
  },
  'events.ledger': {
    transport: 'rest',
    name: 'GET /api/events/{eventId}/ledger',
    requires: 'events:read',
    note: 'and a host of the event or tenant:admin (not_meeting_host otherwise)',
  },
  'events.files': {
    transport: 'rest',
    name: 'GET /api/events/{eventId}/files',
    requires: 'media:read',
    note: 'the media access rule: a member of the event (organizer, participant, attached device) or tenant:admin',
  },
  'events.create': { transport: 'rest', name: 'POST /api/events/create', requires: 'events:write' },
  'events.update': { transport: 'rest', name: 'POST /api/events/update', requires: 'events:write' },
  'events.cancel': { transport: 'rest', name: 'POST /api/events/cancel', requires: 'events:cancel' },
  // Meetings
  'meetings.join': { transport: 'rest', name: 'POST /api/meetings/join/{meetingCode}', requires: 'meetings:join' },
  'meetings.waiting': {
    transport: 'rest',
    name: 'GET /api/meetings/{eventId}/waiting',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'meetings.admit': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/admit',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'meetings.deny': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/deny',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'meetings.remove': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/remove',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'meetings.end': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/end',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'meetings.lock': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/lock',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'meetings.unlock': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/unlock',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'meetings.transferHost': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/transferHost',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'meetings.addHost': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/addHost',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'meetings.mute': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/mute',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'meetings.hostAccess': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/hostAccess',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'meetings.recordingConsent': {
    transport: 'rest',
    name: 'POST /api/meetings/{eventId}/recording-consent',
    requires: 'meetings:join',
    note: 'and asked by the consent request (a member of the meeting, or a joiner held for consent)',
  },
  'meetings.startRapidConnect': {
    transport: 'rest',
    name: 'POST /api/meetings/startRapidConnect/{deviceId}',
    requires: 'meetings:host',
    note: 'also events:write: it creates the event the caller hosts',
  },
  // Call sessions
  'sessions.files': {
    transport: 'rest',
    name: 'GET /api/sessions/{sessionId}/files',
    requires: 'media:read',
    note: "the media access rule: the call's caller or participants and tenant:admin see all, anyone else their own uploads",
  },
  // Notifications
  'notification.save': { transport: 'rest', name: 'POST /api/notification/save', requires: 'notices:manage' },
  'notification.clear': { transport: 'rest', name: 'POST /api/notification/clear', requires: 'notices:manage' },
  'notification.current': { transport: 'rest', name: 'GET /api/notification/current', requires: 'notices:read' },
  // Peripherals
  'peripheral.types': { transport: 'rest', name: 'GET /api/peripheral/types', requires: 'peripherals:read' },
  'peripheral.getDevice': {
    transport: 'rest',
    name: 'POST /api/peripheral/getDevice/{deviceTypeId}',
    requires: 'devices:register',
  },
  'peripheral.devices': { transport: 'rest', name: 'GET /api/peripheral/devices', requires: 'peripherals:read' },
  'peripheral.register': {
    transport: 'rest',
    name: 'POST /api/peripheral/registrations',
    requires: 'tenant:admin',
    note: 'registers a hardware id to a device account (decision 1041)',
  },
  'peripheral.registrations': {
    transport: 'rest',
    name: 'GET /api/peripheral/registrations',
    requires: 'tenant:admin',
  },
  'peripheral.unregister': {
    transport: 'rest',
    name: 'POST /api/peripheral/registrations/delete',
    requires: 'tenant:admin',
  },
  'peripheral.pairingCode': {
    transport: 'rest',
    name: 'POST /api/peripheral/pairingCode',
    requires: 'devices:report',
    note: 'the device account asks for the code its screen shows',
  },
  'peripheral.pair': {
    transport: 'rest',
    name: 'POST /api/peripheral/pair',
    requires: 'devices:control',
    note: 'a signed-in clinician or administrator enters the code a device shows (device accounts lack devices:control)',
  },
  // Outbound events (webhooks): tenant administrators only
  'webhooks.createSubscription': {
    transport: 'rest',
    name: 'POST /api/webhooks/subscriptions',
    requires: 'tenant:admin',
  },
  'webhooks.listSubscriptions': {
    transport: 'rest',
    name: 'GET /api/webhooks/subscriptions',
    requires: 'tenant:admin',
  },
  'webhooks.getSubscription': {
    transport: 'rest',
    name: 'GET /api/webhooks/subscriptions/{subscriptionId}',
    requires: 'tenant:admin',
  },
  'webhooks.pauseSubscription': {
    transport: 'rest',
    name: 'POST /api/webhooks/subscriptions/{subscriptionId}/pause',
    requires: 'tenant:admin',
  },
  'webhooks.resumeSubscription': {
    transport: 'rest',
    name: 'POST /api/webhooks/subscriptions/{subscriptionId}/resume',
    requires: 'tenant:admin',
  },
  'webhooks.deleteSubscription': {
    transport: 'rest',
    name: 'POST /api/webhooks/subscriptions/{subscriptionId}/delete',
    requires: 'tenant:admin',
  },
  'webhooks.rotateSecret': {
    transport: 'rest',
    name: 'POST /api/webhooks/subscriptions/{subscriptionId}/rotateSecret',
    requires: 'tenant:admin',
  },
  'webhooks.attempts': {
    transport: 'rest',
    name: 'GET /api/webhooks/subscriptions/{subscriptionId}/attempts',
    requires: 'tenant:admin',
  },
  'webhooks.replay': {
    transport: 'rest',
    name: 'POST /api/webhooks/subscriptions/{subscriptionId}/replay',
    requires: 'tenant:admin',
  },
  'webhooks.events': { transport: 'rest', name: 'GET /api/webhooks/events', requires: 'tenant:admin' },
  // Background jobs: the tenant's own, for its administrators (decision 841)
  'jobs.queues': { transport: 'rest', name: 'GET /api/admin/jobs/queues', requires: 'tenant:admin' },
  'jobs.failed': { transport: 'rest', name: 'GET /api/admin/jobs/failed', requires: 'tenant:admin' },
  'jobs.retry': {
    transport: 'rest',
    name: 'POST /api/admin/jobs/failed/{jobId}/retry',
    requires: 'tenant:admin',
    note: "only a job whose id and data name the caller's tenant",
  },
  // GraphQL
  'graphql.me': { transport: 'graphql', name: 'me', requires: 'profile:read' },
  'graphql.tenantConfig': { transport: 'graphql', name: 'tenantConfig', requires: 'tenant:read' },
  'graphql.basicTenantInfo': { transport: 'graphql', name: 'basicTenantInfo', requires: 'public' },
  'graphql.generatePrivateServerConfig': {
    transport: 'graphql',
    name: 'generatePrivateServerConfig',
    requires: 'tenant:admin',
  },
  'graphql.generatePrivateServerConfigQrCode': {
    transport: 'graphql',
    name: 'generatePrivateServerConfigQrCode',
    requires: 'tenant:admin',
  },
  'graphql.tenantSecurityRules': { transport: 'graphql', name: 'tenantSecurityRules', requires: 'tenant:read' },
  'graphql.myContacts': { transport: 'graphql', name: 'myContacts', requires: 'contacts:read' },
  'graphql.contactAlphabets': { transport: 'graphql', name: 'contactAlphabets', requires: 'contacts:read' },
  'graphql.groupById': { transport: 'graphql', name: 'groupById', requires: 'contacts:read' },
  'graphql.hasPin': { transport: 'graphql', name: 'hasPin', requires: 'profile:read' },
  'graphql.myNotice': { transport: 'graphql', name: 'myNotice', requires: 'notices:read' },
  'graphql.auditTrail': { transport: 'graphql', name: 'auditTrail', requires: 'audit:read' },
  'graphql.auditVerify': {
    transport: 'graphql',
    name: 'auditVerify',
    requires: 'audit:read',
    note: 'signs the new entries first, as the periodic checkpoint would (decision 1020)',
  },
  'graphql.admit': {
    transport: 'graphql',
    name: 'admit',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'graphql.deny': {
    transport: 'graphql',
    name: 'deny',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'graphql.removeParticipant': {
    transport: 'graphql',
    name: 'removeParticipant',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'graphql.endMeeting': {
    transport: 'graphql',
    name: 'endMeeting',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'graphql.lockMeeting': {
    transport: 'graphql',
    name: 'lockMeeting',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'graphql.unlockMeeting': {
    transport: 'graphql',
    name: 'unlockMeeting',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'graphql.transferHost': {
    transport: 'graphql',
    name: 'transferHost',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'graphql.addHost': {
    transport: 'graphql',
    name: 'addHost',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'graphql.muteRequest': {
    transport: 'graphql',
    name: 'muteRequest',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'graphql.answerHostAccess': {
    transport: 'graphql',
    name: 'answerHostAccess',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'graphql.consentToRecording': {
    transport: 'graphql',
    name: 'consentToRecording',
    requires: 'meetings:join',
    note: 'and asked by the consent request (a member of the meeting, or a joiner held for consent)',
  },
  'graphql.waitingRoom': {
    transport: 'graphql',
    name: 'waitingRoom',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'graphql.eventLedger': {
    transport: 'graphql',
    name: 'eventLedger',
    requires: 'events:read',
    note: 'and a host of the event or tenant:admin (not_meeting_host otherwise)',
  },
  'graphql.eventFiles': {
    transport: 'graphql',
    name: 'eventFiles',
    requires: 'media:read',
    note: 'the media access rule: a member of the event or tenant:admin',
  },
  'graphql.sessionFiles': {
    transport: 'graphql',
    name: 'sessionFiles',
    requires: 'media:read',
    note: "the media access rule: the call's members and tenant:admin see all, anyone else their own uploads",
  },
  // Realtime hub (/hubs/mobile)
  'hub.initEvent': { transport: 'hub', name: 'initEvent', requires: 'meetings:host' },
  'hub.joinEvent': { transport: 'hub', name: 'joinEvent', requires: 'meetings:join' },
  'hub.getMeetingDetails': { transport: 'hub', name: 'getMeetingDetails', requires: 'meetings:join' },
  'hub.initCall': { transport: 'hub', name: 'initCall', requires: 'calls:make' },
  'hub.acceptCall': { transport: 'hub', name: 'acceptCall', requires: 'calls:make' },
  'hub.cancelCall': { transport: 'hub', name: 'cancelCall', requires: 'calls:make' },
  'hub.endCall': { transport: 'hub', name: 'endCall', requires: 'calls:make' },
  'hub.addParticipant': { transport: 'hub', name: 'addParticipant', requires: 'calls:make' },
  'hub.joinRoom': { transport: 'hub', name: 'joinRoom', requires: 'meetings:join' },
  'hub.sayHiToRoom': { transport: 'hub', name: 'sayHiToRoom', requires: 'meetings:join' },
  'hub.initRapidConnect': {
    transport: 'hub',
    name: 'initRapidConnect',
    requires: 'devices:report',
    note: 'claims the hardware id for the caller: device accounts whose account it is registered to (decision 1041), and administrators',
  },
  'hub.addDeviceToEvent': { transport: 'hub', name: 'addDeviceToEvent', requires: 'devices:register' },
  'hub.notify': { transport: 'hub', name: 'notify', requires: 'meetings:host' },
  'hub.offer': { transport: 'hub', name: 'offer', requires: 'meetings:join' },
  'hub.answer': { transport: 'hub', name: 'answer', requires: 'meetings:join' },
  'hub.iceCandidate': { transport: 'hub', name: 'iceCandidate', requires: 'meetings:join' },
  'hub.admit': {
    transport: 'hub',
    name: 'admit',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'hub.deny': {
    transport: 'hub',
    name: 'deny',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'hub.getWaitingRoom': {
    transport: 'hub',
    name: 'getWaitingRoom',
    requires: 'meetings:host',
    note: 'and a host of the event (not_meeting_host otherwise)',
  },
  'hub.removeParticipant': {
    transport: 'hub',
    name: 'removeParticipant',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'hub.endMeeting': {
    transport: 'hub',
    name: 'endMeeting',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'hub.lockMeeting': {
    transport: 'hub',
    name: 'lockMeeting',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'hub.unlockMeeting': {
    transport: 'hub',
    name: 'unlockMeeting',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'hub.transferHost': {
    transport: 'hub',
    name: 'transferHost',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'hub.addHost': {
    transport: 'hub',
    name: 'addHost',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'hub.muteRequest': {
    transport: 'hub',
    name: 'muteRequest',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'hub.answerHostAccess': {
    transport: 'hub',
    name: 'answerHostAccess',
    requires: 'meetings:host',
    note: 'and a host of the meeting (not_meeting_host otherwise)',
  },
  'hub.startRecording': { transport: 'hub', name: 'startRecording', requires: 'meetings:record' },
  'hub.consentToRecording': {
    transport: 'hub',
    name: 'consentToRecording',
    requires: 'meetings:join',
    note: 'and asked by the consent request (a member of the meeting, or a joiner held for consent)',
  },
  'hub.stopRecording': { transport: 'hub', name: 'stopRecording', requires: 'meetings:record' },
  'hub.startPeripheral': { transport: 'hub', name: 'startPeripheral', requires: 'devices:control' },
  'hub.stopPeripheral': { transport: 'hub', name: 'stopPeripheral', requires: 'devices:control' },
  'hub.deviceStatus': { transport: 'hub', name: 'deviceStatus', requires: 'devices:report' },
  'hub.requestRemote': { transport: 'hub', name: 'requestRemote', requires: 'devices:control' },
  'hub.requestHostAccess': { transport: 'hub', name: 'requestHostAccess', requires: 'meetings:join' },
  'hub.remoteControl': { transport: 'hub', name: 'remoteControl', requires: 'devices:control' },
  'hub.shareImage': { transport: 'hub', name: 'shareImage', requires: 'meetings:host' },
  'hub.clearImage': { transport: 'hub', name: 'clearImage', requires: 'meetings:host' },
  'hub.resume': {
    transport: 'hub',
    name: 'resume',
    requires: 'authenticated',
    note: "replays the pushes the connection's own streams missed",
  },
  'hub.refreshToken': {
    transport: 'hub',
    name: 'refreshToken',
    requires: 'authenticated',
    note: "a newer access token of the same user replaces the connection's",
  },
} as const satisfies Record<string, OperationEntry>;

export type OperationId = keyof typeof OPERATIONS;

/** The requirement of an operation; every transport asks here rather than hard-coding a permission. */
export function permissionFor(id: OperationId): Requirement {
  return OPERATIONS[id].requires;
}

/** Operation id of a hub method or GraphQL operation by its SPEC name, for transports that dispatch by name. */
export function operationByName(transport: Transport, name: string): OperationId | undefined {
  return (Object.keys(OPERATIONS) as OperationId[]).find(
    (id) => OPERATIONS[id].transport === transport && OPERATIONS[id].name === name,
  );
}

/** Whether a principal's permissions satisfy a requirement (`public` always, `authenticated` with any principal). */
export function satisfies(req: Requirement, permissions: ReadonlySet<string> | undefined): boolean {
  if (req === 'public') return true;
  if (!permissions) return false;
  return req === 'authenticated' || permissions.has(req);
}
