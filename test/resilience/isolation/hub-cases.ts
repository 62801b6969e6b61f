import { connect, must, type HubClient } from '../../support/hub-client.js';
import { registerHardware, tokenFor } from '../../support/auth.js';
import type { TestNode } from '../../support/node.js';
import type { HubRoleHandle } from '../../../src/hub/hub.role.js';
import type { SeededTenant } from './seed.js';
import { uploadImage } from '../../support/media.js';

/** A user of a seeded tenant as the hub cases use it. */
export interface Member {
  id: string;
  username: string;
  token: string;
}

/** What a case may do in one tenant: make events, open sockets, sign in again. */
export interface TenantKit {
  t: SeededTenant;
  node: TestNode;
  /** A socket of `user` on this tenant's host (closed by the matrix at the end). */
  socket(user: Member): Promise<HubClient>;
  /**
   * An event organized by the tenant's helper host with `me` as a participant in `role` (and, when
   * `started`, its meeting started by the host): what a consultation looks like before a method is called.
   */
  event(
    me: Member,
    opts?: { role?: 'host' | 'participant'; started?: boolean },
  ): Promise<{ eventId: string; meetingCode: string; host: HubClient }>;
  /** A hardware id no other case used. */
  hardwareId(): string;
}

/**
 * One hub method: how to bring the caller's socket and the tenant into the state in which the method
 * succeeds for `me`, answering the arguments to send. Run for the caller's own tenant it gives the
 * "own" cell; run for the other tenant (with its user of the same role) it gives arguments that are
 * valid there and must be refused here.
 */
export interface HubCase {
  build(k: TenantKit, me: Member, s: HubClient): Promise<unknown[]>;
  /**
   * Roles holding the method's permission for which no state makes the call succeed, with the one code
   * they get: e.g. addDeviceToEvent needs a socket that ran initRapidConnect, which needs devices:report.
   */
  cannot?: Record<string, string>;
}

const sdp = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n';

/** A started meeting `me` joined as a participant (the host is in it too). */
async function joined(k: TenantKit, me: Member, s: HubClient) {
  const e = await k.event(me, { started: true });
  await must(s, 'joinEvent', { eventId: e.eventId });
  return e;
}

/** A started meeting `me` hosts (its socket ran initEvent). */
async function hosting(k: TenantKit, me: Member, s: HubClient) {
  const e = await k.event(me, { role: 'host' });
  await must(s, 'initEvent', { eventId: e.eventId });
  return e;
}

/**
 * A fresh hardware id `me` may claim: registered to `me` when it is a device account (decision 1041);
 * administrators claim without a registration.
 */
async function ownHardware(k: TenantKit, me: Member): Promise<string> {
  const id = k.hardwareId();
  const isDevice = await k.node.infra.mongo.tenantDb(k.t.name).models.User.exists({ _id: me.id, kind: 'device' });
  if (isDevice) await registerHardware(k.node, k.t.name, id, me.id);
  return id;
}

/** A started meeting `me` joined, with a headset (the helper device account) attached to it. */
async function withHeadset(k: TenantKit, me: Member, s: HubClient) {
  const e = await joined(k, me, s);
  const headset = await k.socket(k.t.helpers.headset);
  const deviceId = await ownHardware(k, k.t.helpers.headset);
  await must(headset, 'initRapidConnect', deviceId, e.meetingCode);
  return { ...e, deviceId };
}

/** A ringing call from `me` to the helper peer. */
async function ringing(k: TenantKit, s: HubClient) {
  return (await must<{ callId: string }>(s, 'initCall', { calleeIds: [k.t.helpers.peer.id], callType: 'audio' }))
    .callId;
}

/**
 * A started meeting `me` hosts with a waiting room, the helper headset waiting in it (joined by code
 * over REST, as a headset does): what admit and deny act on.
 */
async function withWaiting(k: TenantKit, me: Member, s: HubClient) {
  const e = await k.event(me, { role: 'host' });
  await k.node.infra.mongo
    .tenantDb(k.t.name)
    .models.Event.updateOne({ _id: e.eventId }, { $set: { waitingRoom: true } })
    .exec();
  await must(s, 'initEvent', { eventId: e.eventId });
  const joined = await k.node.http.post(`/api/meetings/join/${e.meetingCode}`, {
    tenant: k.t.name,
    token: k.t.helpers.headset.token,
  });
  if (joined.body?.status !== 'waiting') throw new Error(`the headset did not wait: ${joined.text}`);
  return { ...e, userId: k.t.helpers.headset.id };
}

/** A started meeting `me` co-hosts (joined), with the event's helper host in it too: what host controls act on. */
async function cohosting(k: TenantKit, me: Member, s: HubClient) {
  const e = await k.event(me, { role: 'host', started: true });
  await must(s, 'joinEvent', { eventId: e.eventId });
  return { ...e, other: k.t.helpers.host.id };
}

/** Valid arguments, and the state they need, for every hub method (the matrix fails on a method without one). */
export const HUB_CASES: Record<string, HubCase> = {
  initEvent: { build: async (k, me) => [{ eventId: (await k.event(me, { role: 'host' })).eventId }] },
  joinEvent: { build: async (k, me) => [{ eventId: (await k.event(me, { started: true })).eventId }] },
  getMeetingDetails: { build: async (k, me) => [{ eventId: (await k.event(me, { started: true })).eventId }] },
  notify: { build: async (k, me, s) => ['raiseHand', { eventId: (await hosting(k, me, s)).eventId, data: { n: 1 } }] },
  startRecording: { build: async (k, me, s) => [{ eventId: (await hosting(k, me, s)).eventId }] },
  stopRecording: {
    build: async (k, me, s) => {
      const { eventId } = await hosting(k, me, s);
      await must(s, 'startRecording', { eventId });
      return [{ eventId }];
    },
  },
  requestHostAccess: { build: async (k, me, s) => [{ eventId: (await joined(k, me, s)).eventId }] },
  shareImage: {
    build: async (k, me, s) => [
      {
        eventId: (await hosting(k, me, s)).eventId,
        // By hash: tenant B's content is then refused as unknown here (file_not_found), like B's ids.
        image: { hash: (await uploadImage(k.node.url!, k.t.name, me.token)).hash },
        caption: 'scan',
      },
    ],
  },
  clearImage: {
    build: async (k, me, s) => {
      const { eventId } = await hosting(k, me, s);
      await must(s, 'shareImage', {
        eventId,
        image: { url: (await uploadImage(k.node.url!, k.t.name, me.token)).url },
      });
      return [{ eventId }];
    },
  },
  initCall: { build: async (k) => [{ calleeIds: [k.t.helpers.peer.id], callType: 'audio' }] },
  acceptCall: {
    build: async (k, me) => {
      const peer = await k.socket(k.t.helpers.peer);
      return [
        {
          callId: (await must<{ callId: string }>(peer, 'initCall', { calleeIds: [me.id], callType: 'video' })).callId,
        },
      ];
    },
  },
  cancelCall: { build: async (k, _me, s) => [{ callId: await ringing(k, s), reason: 'changed my mind' }] },
  endCall: { build: async (k, _me, s) => [{ callId: await ringing(k, s) }] },
  addParticipant: { build: async (k, _me, s) => [{ callId: await ringing(k, s), userId: k.t.helpers.host.id }] },
  offer: {
    build: async (k, me, s) => [{ targetUserId: k.t.helpers.host.id, eventId: (await joined(k, me, s)).eventId, sdp }],
  },
  answer: {
    build: async (k, me, s) => [{ targetUserId: k.t.helpers.host.id, eventId: (await joined(k, me, s)).eventId, sdp }],
  },
  iceCandidate: {
    build: async (k, me, s) => [
      {
        targetUserId: k.t.helpers.host.id,
        eventId: (await joined(k, me, s)).eventId,
        candidate: { candidate: 'candidate:1 1 udp 2122260223 10.0.0.1 50000 typ host', sdpMid: '0', sdpMLineIndex: 0 },
      },
    ],
  },
  joinRoom: { build: async (k, me) => [(await k.event(me)).eventId] },
  sayHiToRoom: {
    build: async (k, me, s) => {
      const { eventId } = await k.event(me);
      await must(s, 'joinRoom', eventId);
      return [eventId];
    },
  },
  initRapidConnect: {
    build: async (k, me) => [await ownHardware(k, me), (await k.event(me, { started: true })).meetingCode],
  },
  addDeviceToEvent: {
    build: async (k, me, s) => {
      await must(s, 'initRapidConnect', await ownHardware(k, me), (await k.event(me, { started: true })).meetingCode);
      const next = await k.event(me);
      return [next.meetingCode, next.eventId];
    },
    cannot: { clinician: 'invalid_state' },
  },
  deviceStatus: {
    build: async (k, me, s) => {
      const { eventId, meetingCode } = await k.event(me, { started: true });
      const deviceId = await ownHardware(k, me);
      await must(s, 'initRapidConnect', deviceId, meetingCode);
      return [eventId, { deviceId, batteryLevel: 80, charging: false, camera: 'on' }];
    },
  },
  startPeripheral: {
    build: async (k, me, s) => {
      const { eventId, deviceId } = await withHeadset(k, me, s);
      return [{ eventId, deviceId, peripheralId: 'otoscope-1', peripheralType: 'otoscope', settings: { zoom: 2 } }];
    },
  },
  stopPeripheral: {
    build: async (k, me, s) => {
      const { eventId, deviceId } = await withHeadset(k, me, s);
      await must(s, 'startPeripheral', { eventId, deviceId, peripheralId: 'otoscope-1' });
      return [{ eventId, deviceId, peripheralId: 'otoscope-1' }];
    },
  },
  requestRemote: {
    build: async (k, me, s) => {
      const { eventId, deviceId } = await withHeadset(k, me, s);
      return [eventId, deviceId];
    },
  },
  remoteControl: {
    build: async (k, me, s) => {
      const { eventId, deviceId } = await withHeadset(k, me, s);
      await must(s, 'requestRemote', eventId, deviceId);
      return [eventId, { deviceId, command: 'zoom', params: { level: 2 } }];
    },
  },
  refreshToken: { build: async (k, me) => [await tokenFor(k.node, k.t.name, me.username)] },
  // The caller's own push stream from its start: tenant B's user's stream is not the connection's (forbidden).
  resume: { build: async (_k, me) => [[{ stream: `u:${me.id}` }]] },
  admit: {
    build: async (k, me, s) => {
      const { eventId, userId } = await withWaiting(k, me, s);
      return [{ eventId, userId }];
    },
  },
  deny: {
    build: async (k, me, s) => {
      const { eventId, userId } = await withWaiting(k, me, s);
      return [{ eventId, userId, message: 'not today' }];
    },
  },
  getWaitingRoom: { build: async (k, me, s) => [{ eventId: (await hosting(k, me, s)).eventId }] },
  removeParticipant: {
    build: async (k, me, s) => {
      const { eventId, other } = await cohosting(k, me, s);
      return [{ eventId, userId: other, reason: 'matrix' }];
    },
  },
  endMeeting: { build: async (k, me, s) => [{ eventId: (await hosting(k, me, s)).eventId, reason: 'matrix' }] },
  lockMeeting: { build: async (k, me, s) => [{ eventId: (await hosting(k, me, s)).eventId }] },
  unlockMeeting: {
    build: async (k, me, s) => {
      const { eventId } = await hosting(k, me, s);
      await must(s, 'lockMeeting', { eventId });
      return [{ eventId }];
    },
  },
  transferHost: {
    build: async (k, me, s) => {
      const { eventId, other } = await cohosting(k, me, s);
      return [{ eventId, userId: other }];
    },
  },
  addHost: {
    build: async (k, me, s) => {
      const { eventId, other } = await cohosting(k, me, s);
      return [{ eventId, userId: other }];
    },
  },
  muteRequest: {
    build: async (k, me, s) => {
      const { eventId, other } = await cohosting(k, me, s);
      return [{ eventId, userId: other, media: 'audio' }];
    },
  },
  answerHostAccess: {
    build: async (k, me, s) => {
      const { eventId, other, host } = await cohosting(k, me, s);
      await must(host, 'requestHostAccess', { eventId });
      return [{ eventId, userId: other, grant: false, message: 'not now' }];
    },
  },
  consentToRecording: {
    build: async (k, me, s) => {
      const e = await joined(k, me, s);
      const requestId = `iso-${k.hardwareId()}`;
      // The tenant asks for consent just while the host opens the request (the open request lives in the actor).
      // With the longest timeout the settings allow: a request nobody answers (the device row's, made in
      // tenant B for a role that cannot answer it) would otherwise time out (120 s by default) in the middle
      // of a later row on a slow machine and change tenant B's state between that row's two reads.
      const config = k.node.infra.mongo.tenantDb(k.t.name).models.TenantConfig;
      const consent = { 'meetings.recordingConsent': 'all', 'meetings.recordingConsentTimeoutSeconds': 3600 };
      await config.updateOne({ _id: 'tenant' }, { $set: consent }).exec();
      try {
        await must(e.host, 'startRecording', { eventId: e.eventId, requestId });
      } finally {
        await config
          .updateOne({ _id: 'tenant' }, { $unset: Object.fromEntries(Object.keys(consent).map((p) => [p, 1])) })
          .exec();
      }
      return [{ eventId: e.eventId, requestId, consent: true }];
    },
    // Headsets are equipment: a consent request never asks them.
    cannot: { device: 'consent_not_required' },
  },
};

/** Opens and tracks sockets; closes them all at the end. */
export function socketPool(node: TestNode) {
  const open: HubClient[] = [];
  const hub = node.roles.get('hub') as HubRoleHandle;
  return {
    async socket(tenant: string, user: Member): Promise<HubClient> {
      const s = await connect(node.url!, tenant, { token: user.token });
      open.push(s);
      return s;
    },
    /**
     * Closes every socket and resolves once the hub saw each go and finished what their going away
     * changes (a meeting leave in the audit trail, a waiting-room leave in the meeting's actor): a
     * tenant's state read afterwards is no longer changing because of them.
     */
    async closeAll(): Promise<void> {
      const gone = open.splice(0).map((s) => {
        const server = s.id === undefined ? undefined : hub.io.of('/').sockets.get(s.id);
        const seen = server ? new Promise<void>((r) => server.once('disconnect', () => r())) : undefined;
        s.close();
        return seen;
      });
      await Promise.all(gone);
      await hub.settled();
    },
  };
}
