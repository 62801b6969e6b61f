import { describe, expect, it } from '@jest/globals';
import { OPERATIONS } from '../../../src/operations/operation-table.js';
import { API_GROUPS } from '../../../src/http/routes/groups.js';
import { signInRoutes } from '../../../src/http/routes/route-spec.js';
import { requirementOf } from '../../../src/http/openapi/openapi.js';
import { HUB_METHODS } from '../../../src/hub/hub.role.js';
import { methodTable } from '../../../src/hub/method.js';
import { Metrics } from '../../../src/observability/metrics.js';
import { need, type GraphQLContext } from '../../../src/http/graphql/context.js';
import { GRAPHQL_OPERATIONS, type GraphQLOperation } from '../../../src/http/graphql/operations.js';
import { PERMISSIONS } from '../../../src/kernel/permissions.js';

/**
 * Who may call what, operation by operation: `transport name -> requirement`, sorted. A change here is a
 * change of who may do what and is made on purpose, in this list and in the declaration, never as a side
 * effect of moving declarations around.
 */
const REQUIRED = [
  'graphql addHost -> meetings:host',
  'graphql admit -> meetings:host',
  'graphql answerHostAccess -> meetings:host',
  'graphql auditTrail -> audit:read',
  'graphql auditVerify -> audit:read',
  'graphql basicTenantInfo -> public',
  'graphql consentToRecording -> meetings:join',
  'graphql contactAlphabets -> contacts:read',
  'graphql deny -> meetings:host',
  'graphql endMeeting -> meetings:host',
  'graphql eventFiles -> media:read',
  'graphql eventLedger -> events:read',
  'graphql generatePrivateServerConfig -> tenant:admin',
  'graphql generatePrivateServerConfigQrCode -> tenant:admin',
  'graphql groupById -> contacts:read',
  'graphql hasPin -> profile:read',
  'graphql lockMeeting -> meetings:host',
  'graphql me -> profile:read',
  'graphql muteRequest -> meetings:host',
  'graphql myContacts -> contacts:read',
  'graphql myNotice -> notices:read',
  'graphql removeParticipant -> meetings:host',
  'graphql sessionFiles -> media:read',
  'graphql tenantConfig -> tenant:read',
  'graphql tenantSecurityRules -> tenant:read',
  'graphql transferHost -> meetings:host',
  'graphql unlockMeeting -> meetings:host',
  'graphql waitingRoom -> meetings:host',
  'hub acceptCall -> calls:make',
  'hub addDeviceToEvent -> devices:register',
  'hub addHost -> meetings:host',
  'hub addParticipant -> calls:make',
  'hub admit -> meetings:host',
  'hub answer -> meetings:join',
  'hub answerHostAccess -> meetings:host',
  'hub cancelCall -> calls:make',
  'hub clearImage -> meetings:host',
  'hub consentToRecording -> meetings:join',
  'hub deny -> meetings:host',
  'hub deviceStatus -> devices:report',
  'hub endCall -> calls:make',
  'hub endMeeting -> meetings:host',
  'hub getMeetingDetails -> meetings:join',
  'hub getWaitingRoom -> meetings:host',
  'hub iceCandidate -> meetings:join',
  'hub initCall -> calls:make',
  'hub initEvent -> meetings:host',
  'hub initRapidConnect -> devices:report',
  'hub joinEvent -> meetings:join',
  'hub joinRoom -> meetings:join',
  'hub lockMeeting -> meetings:host',
  'hub muteRequest -> meetings:host',
  'hub notify -> meetings:host',
  'hub offer -> meetings:join',
  'hub refreshToken -> authenticated',
  'hub remoteControl -> devices:control',
  'hub removeParticipant -> meetings:host',
  'hub requestHostAccess -> meetings:join',
  'hub requestRemote -> devices:control',
  'hub resume -> authenticated',
  'hub sayHiToRoom -> meetings:join',
  'hub shareImage -> meetings:host',
  'hub startPeripheral -> devices:control',
  'hub startRecording -> meetings:record',
  'hub stopPeripheral -> devices:control',
  'hub stopRecording -> meetings:record',
  'hub transferHost -> meetings:host',
  'hub unlockMeeting -> meetings:host',
  'rest GET /.well-known/jwks.json -> public',
  'rest GET /api/account/loginCode -> authenticated',
  'rest GET /api/account/qrCode -> public',
  'rest GET /api/admin/audit -> audit:read',
  'rest GET /api/admin/audit/checkpoints -> audit:read',
  'rest GET /api/admin/audit/export -> audit:read',
  'rest GET /api/admin/audit/fhir -> audit:read',
  'rest GET /api/admin/audit/fhir/bulk -> audit:read',
  'rest GET /api/admin/audit/verify -> audit:read',
  'rest GET /api/admin/isOnline/{tenant}/{username} -> presence:read',
  'rest GET /api/admin/jobs/failed -> tenant:admin',
  'rest GET /api/admin/jobs/queues -> tenant:admin',
  'rest GET /api/admin/lastSeen/{contactId} -> presence:read',
  'rest GET /api/admin/lastSeen/{tenant}/{username} -> presence:read',
  'rest GET /api/admin/pendingUsers -> users:import',
  'rest GET /api/admin/user/{tenant}/{username} -> presence:read',
  'rest GET /api/contacts/get -> contacts:read',
  'rest GET /api/contacts/group/users/{groupId} -> contacts:read',
  'rest GET /api/contacts/me -> profile:read',
  'rest GET /api/events/get -> events:read',
  'rest GET /api/events/get/{eventId} -> events:read',
  'rest GET /api/events/getParticipants/{eventId} -> events:read',
  'rest GET /api/events/{eventId}/files -> media:read',
  'rest GET /api/events/{eventId}/ledger -> events:read',
  'rest GET /api/files/shared/{filePath} -> media:read',
  'rest GET /api/media/download/{tenant}/{hash} -> media:read',
  'rest GET /api/media/thumbnail/{tenant}/{hash} -> media:read',
  'rest GET /api/meetings/{eventId}/waiting -> meetings:host',
  'rest GET /api/notification/current -> notices:read',
  'rest GET /api/peripheral/devices -> peripherals:read',
  'rest GET /api/peripheral/registrations -> tenant:admin',
  'rest GET /api/peripheral/types -> peripherals:read',
  'rest GET /api/sessions/{sessionId}/files -> media:read',
  'rest GET /api/tenant/ping -> public',
  'rest GET /api/tenant/startrecording -> meetings:record',
  'rest GET /api/tenant/stoprecording -> meetings:record',
  'rest GET /api/uploads/pendingUsers -> users:import',
  'rest GET /api/uploads/pendingUsers/{importId} -> users:import',
  'rest GET /api/webhooks/events -> tenant:admin',
  'rest GET /api/webhooks/subscriptions -> tenant:admin',
  'rest GET /api/webhooks/subscriptions/{subscriptionId} -> tenant:admin',
  'rest GET /api/webhooks/subscriptions/{subscriptionId}/attempts -> tenant:admin',
  'rest GET /files/{tenantId}/{container}/{*path} -> media:read',
  'rest GET /media/download/{tenant}/{hash} -> media:read',
  'rest PATCH /api/admin/securityRules -> tenant:admin',
  'rest PATCH /api/admin/tenantConfig -> tenant:admin',
  'rest POST /api/account/approveLoginCode -> authenticated',
  'rest POST /api/account/assignRole -> users:manage',
  'rest POST /api/account/backchannel-logout -> public',
  'rest POST /api/account/extendLoginCode -> public',
  'rest POST /api/account/impersonate -> account:impersonate',
  'rest POST /api/account/login -> public',
  'rest POST /api/account/offlineLogin -> public',
  'rest POST /api/account/offlineToken -> account:offline',
  'rest POST /api/account/org -> public',
  'rest POST /api/account/refresh -> public',
  'rest POST /api/account/refuseLoginCode -> authenticated',
  'rest POST /api/account/resetPin -> profile:write',
  'rest POST /api/account/revokeOfflineToken -> account:offline',
  'rest POST /api/account/{userId}/logout -> authenticated',
  'rest POST /api/admin/audit/checkpoint -> tenant:admin',
  'rest POST /api/admin/jobs/failed/{jobId}/retry -> tenant:admin',
  'rest POST /api/admin/migrate/{tenantName} -> public',
  'rest POST /api/admin/pendingUsers/activate -> users:manage',
  'rest POST /api/contacts/group/add -> groups:manage',
  'rest POST /api/contacts/group/create -> groups:manage',
  'rest POST /api/contacts/group/remove -> groups:manage',
  'rest POST /api/contacts/group/rename -> groups:manage',
  'rest POST /api/contacts/notificationSeen/{noticeId} -> notices:read',
  'rest POST /api/contacts/setFavourite -> contacts:read',
  'rest POST /api/contacts/update -> profile:write',
  'rest POST /api/events/cancel -> events:cancel',
  'rest POST /api/events/create -> events:write',
  'rest POST /api/events/update -> events:write',
  'rest POST /api/media/syncFiles -> media:upload',
  'rest POST /api/media/upload -> media:upload',
  'rest POST /api/meetings/join/{meetingCode} -> meetings:join',
  'rest POST /api/meetings/startRapidConnect/{deviceId} -> meetings:host',
  'rest POST /api/meetings/{eventId}/addHost -> meetings:host',
  'rest POST /api/meetings/{eventId}/admit -> meetings:host',
  'rest POST /api/meetings/{eventId}/deny -> meetings:host',
  'rest POST /api/meetings/{eventId}/end -> meetings:host',
  'rest POST /api/meetings/{eventId}/hostAccess -> meetings:host',
  'rest POST /api/meetings/{eventId}/lock -> meetings:host',
  'rest POST /api/meetings/{eventId}/mute -> meetings:host',
  'rest POST /api/meetings/{eventId}/recording-consent -> meetings:join',
  'rest POST /api/meetings/{eventId}/remove -> meetings:host',
  'rest POST /api/meetings/{eventId}/transferHost -> meetings:host',
  'rest POST /api/meetings/{eventId}/unlock -> meetings:host',
  'rest POST /api/notification/clear -> notices:manage',
  'rest POST /api/notification/save -> notices:manage',
  'rest POST /api/peripheral/getDevice/{deviceTypeId} -> devices:register',
  'rest POST /api/peripheral/pair -> devices:control',
  'rest POST /api/peripheral/pairingCode -> devices:report',
  'rest POST /api/peripheral/registrations -> tenant:admin',
  'rest POST /api/peripheral/registrations/delete -> tenant:admin',
  'rest POST /api/uploads/pendingUsers -> users:import',
  'rest POST /api/webhooks/subscriptions -> tenant:admin',
  'rest POST /api/webhooks/subscriptions/{subscriptionId}/delete -> tenant:admin',
  'rest POST /api/webhooks/subscriptions/{subscriptionId}/pause -> tenant:admin',
  'rest POST /api/webhooks/subscriptions/{subscriptionId}/replay -> tenant:admin',
  'rest POST /api/webhooks/subscriptions/{subscriptionId}/resume -> tenant:admin',
  'rest POST /api/webhooks/subscriptions/{subscriptionId}/rotateSecret -> tenant:admin',
];

const of = (transport: string) => REQUIRED.filter((l) => l.startsWith(`${transport} `));

/** `/get/:eventId` under `/api/events` -> `/api/events/get/{eventId}`; a wildcard `*path` -> `{*path}`. */
const specName = (base: string, path: string) =>
  `${base}${path}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*([A-Za-z0-9_]+)/g, '{*$1}');

describe('what every operation requires', () => {
  it('is the decided mapping, for every REST endpoint, GraphQL operation and hub method', () => {
    const table = Object.values(OPERATIONS).map((e) => `${e.transport} ${e.name} -> ${e.requires}`);
    expect(table.sort()).toEqual(REQUIRED);
  });

  it('is what the REST guard enforces on every declared route', () => {
    const served = API_GROUPS.flatMap((g) =>
      g.routes.map((r) => `rest ${r.method.toUpperCase()} ${specName(g.base, r.path)} -> ${requirementOf(r)}`),
    );
    expect(served.sort()).toEqual(of('rest'));
  });

  it('skips the bearer token check on the sign-in routes alone', () => {
    expect([...signInRoutes(API_GROUPS)].sort()).toEqual([
      'GET /api/account/qrCode',
      'POST /api/account/backchannel-logout',
      'POST /api/account/extendLoginCode',
      'POST /api/account/login',
      'POST /api/account/offlineLogin',
      'POST /api/account/org',
      'POST /api/account/refresh',
    ]);
  });

  it('is what the hub dispatcher checks before every method', () => {
    const table = methodTable(HUB_METHODS, new Metrics({}, false));
    expect([...table].map(([name, e]) => `hub ${name} -> ${e.required}`).sort()).toEqual(of('hub'));
  });

  it("is what a GraphQL resolver's need() lets through, found by asking it", () => {
    /** Whether need() admits a caller: none (undefined) or one holding exactly `permissions`. */
    const admits = (name: GraphQLOperation, permissions?: string[]) => {
      const ctx = { principal: permissions && { permissions: new Set(permissions) } } as unknown as GraphQLContext;
      try {
        need(ctx, name);
        return true;
      } catch {
        return false;
      }
    };
    const seen = (Object.keys(GRAPHQL_OPERATIONS) as GraphQLOperation[]).map((name) => {
      const required = admits(name)
        ? 'public'
        : admits(name, [])
          ? 'authenticated'
          : PERMISSIONS.filter((p) => admits(name, [p])).join(' or ');
      return `graphql ${name} -> ${required}`;
    });
    expect(seen.sort()).toEqual(of('graphql'));
  });
});
