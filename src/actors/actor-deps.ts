import type { Principal } from '../kernel/principal.js';
import type { CallService } from '../core/meetings/call.service.js';
import type { PresenceService } from '../core/directory/presence.service.js';
import type { Admission } from '../core/meetings/meeting-data.js';
import type { MeetingEnd } from '../core/meetings/event-status.js';
import type { RecordingConsentService } from '../core/meetings/recording-consent.service.js';
import type { CompletionService } from '../core/meetings/completion.service.js';
import type { DeviceStatusUpdate } from '../core/meetings/peripheral.service.js';
import { type Caller, principalOf } from '../kernel/caller.js';
import { callActor, type CallActorDeps } from './call.actor.js';
import { meetingActor, type MeetingActorDeps } from './meeting/meeting.actor.js';
import type { RecordingOpts } from './meeting/meeting-state.js';
import type { RecordingRequester } from '../core/meetings/recording.service.js';
import { deviceActor, type DeviceActorDeps, type DeviceAuditEntry } from './device.actor.js';
import type { MeetingData } from '../contracts/meeting.schema.js';
import type { ActorBehavior } from './runtime/types.js';

/** How many headset heartbeats may be missed before the device is offline. */
export const DEVICE_MISSED_HEARTBEATS = 3;

/** Timers of the behaviours (config.hub: HUB_RING_TIMEOUT_MS, HUB_DEVICE_HEARTBEAT_MS). */
export interface ActorTimings {
  ringTimeoutMs: number;
  deviceHeartbeatMs: number;
  callPresenceCheckMs: number;
}

/** The services the actors use, as narrow as the behaviours need them (from the composition root). */
export interface ActorServices {
  calls: Pick<CallService, 'activeUserIds' | 'record' | 'recordedStatus'>;
  presence: Pick<PresenceService, 'onlineMany'>;
  meetings: {
    initEvent(p: Principal, eventId: string): Promise<object>;
    joinDetails(p: Principal, eventId: string, seen?: Admission['event'], held?: boolean): Promise<object>;
    joinByCode(
      tenant: string,
      meetingCode: string,
      joiner: { kind: 'principal'; principal: Principal },
      seen?: Admission['event'],
    ): Promise<object>;
    admission(p: Principal, eventId: string, meetingCode?: string): Promise<Admission>;
    isParticipant(tenant: string, eventId: string, userId: string): Promise<boolean>;
    isHost(tenant: string, eventId: string, userId: string): Promise<boolean>;
    endEvent(tenant: string, eventId: string, last?: { seq: number }): Promise<unknown>;
    meetingEnd(tenant: string, eventId: string): Promise<MeetingEnd | null>;
    keepLastSeq(tenant: string, eventId: string, seq: number): Promise<void>;
    addDeviceToEvent(p: Principal, input: { eventId: string; joinCode: string }): Promise<unknown>;
    removeFromRoom(tenant: string, eventId: string, member: { userId: string; device: boolean }): Promise<void>;
  };
  recording: {
    requestStart(tenant: string, eventId: string, userId: string, by: RecordingRequester): Promise<unknown>;
    requestStop(tenant: string, eventId: string, userId: string, by: RecordingRequester): Promise<unknown>;
    status(tenant: string, eventId: string): Promise<{ state: string }>;
    runningFor(tenant: string, eventId: string): Promise<string | null>;
  };
  /** The conference's completion: the event's move and whether it was audited (decision 1090). */
  completion: Pick<CompletionService, 'closeEvent' | 'audited'>;
  consent: Pick<RecordingConsentService, 'settings' | 'record'>;
  devices: {
    recordStatus(tenant: string, deviceId: string, s: DeviceStatusUpdate): Promise<void>;
  };
  audit: {
    record(
      tenant: string,
      entry: {
        action: string;
        outcome: 'success' | 'failure';
        actorId?: string;
        subjectId?: string;
        eventId?: string;
        details?: Record<string, unknown>;
      },
    ): Promise<unknown>;
  };
}

export function callDeps(s: ActorServices, t: ActorTimings): CallActorDeps {
  return {
    ringTimeoutMs: t.ringTimeoutMs,
    activeUserIds: (tenant, ids) => s.calls.activeUserIds(tenant, ids),
    saveRecord: (tenant, call, epoch) =>
      s.calls.record(
        tenant,
        {
          callId: call.callId,
          callerId: call.callerId,
          participantIds: call.invitedIds,
          status: call.status === 'idle' ? 'ringing' : call.status,
          startedAt: new Date(call.startedAt ?? Date.now()),
          ...(call.answeredAt ? { answeredAt: new Date(call.answeredAt) } : {}),
          ...(call.endedAt ? { endedAt: new Date(call.endedAt) } : {}),
        },
        epoch,
      ),
    recordedStatus: (tenant, callId) => s.calls.recordedStatus(tenant, callId),
    presenceCheckMs: t.callPresenceCheckMs,
    onlineUserIds: (tenant, ids) => s.presence.onlineMany(tenant, ids),
  };
}

/** The recording service's requester from the meeting actor's: who at the keyboard, which transport. */
function requester(userId: string, o: RecordingOpts): RecordingRequester {
  return {
    // The conference's completion: no person asked.
    ...(o.via === 'telemetry' ? {} : { actorId: o.actorId ?? userId }),
    via: o.via ?? 'hub',
    ...(o.ip ? { ip: o.ip } : {}),
    ...(o.consented ? { consented: o.consented } : {}),
  };
}

export function meetingDeps(s: ActorServices): MeetingActorDeps {
  return {
    initEvent: async (tenant, caller, eventId) =>
      (await s.meetings.initEvent(principalOf(tenant, caller), eventId)) as MeetingData,
    joinEvent: async (tenant, caller, eventId, code, seen, held) =>
      (code
        ? await s.meetings.joinByCode(tenant, code, { kind: 'principal', principal: principalOf(tenant, caller) }, seen)
        : await s.meetings.joinDetails(principalOf(tenant, caller), eventId, seen, held)) as MeetingData,
    admission: (tenant, caller, eventId, code) => s.meetings.admission(principalOf(tenant, caller), eventId, code),
    isParticipant: (tenant, eventId, userId) => s.meetings.isParticipant(tenant, eventId, userId),
    isHost: (tenant, eventId, userId) => s.meetings.isHost(tenant, eventId, userId),
    startRecording: async (tenant, eventId, userId, opts = {}) =>
      void (await s.recording.requestStart(tenant, eventId, userId, requester(userId, opts))),
    consentSettings: (tenant) => s.consent.settings(tenant),
    recordConsent: (tenant, eventId, answer) => s.consent.record(tenant, eventId, answer),
    stopRecording: async (tenant, eventId, userId, opts = {}) =>
      void (await s.recording.requestStop(tenant, eventId, userId, requester(userId, opts))),
    recordingRunning: async (tenant, eventId) =>
      ['starting', 'recording'].includes((await s.recording.status(tenant, eventId)).state),
    attachDevice: async (tenant, caller, eventId, code) =>
      void (await s.meetings.addDeviceToEvent(principalOf(tenant, caller), { eventId, joinCode: code })),
    endEvent: async (tenant, eventId, last) => void (await s.meetings.endEvent(tenant, eventId, last)),
    meetingEnd: (tenant, eventId) => s.meetings.meetingEnd(tenant, eventId),
    keepLastSeq: (tenant, eventId, seq) => s.meetings.keepLastSeq(tenant, eventId, seq),
    removeFromRoom: (tenant, eventId, member) => s.meetings.removeFromRoom(tenant, eventId, member),
    recordingOwner: (tenant, eventId) => s.recording.runningFor(tenant, eventId),
    completeEvent: (tenant, eventId, completion) => s.completion.closeEvent(tenant, eventId, completion),
    completionAudited: (tenant, eventId) => s.completion.audited(tenant, eventId),
    audit: async (tenant, entry) => void (await s.audit.record(tenant, entry)),
  };
}

export function deviceDeps(s: ActorServices, t: ActorTimings): DeviceActorDeps {
  return {
    heartbeatIntervalMs: t.deviceHeartbeatMs,
    offlineAfterMs: t.deviceHeartbeatMs * DEVICE_MISSED_HEARTBEATS,
    audit: async (tenant, e: DeviceAuditEntry) =>
      void (await s.audit.record(tenant, {
        action: e.action,
        outcome: e.outcome,
        actorId: e.actorId,
        ...(e.eventId ? { eventId: e.eventId } : {}),
        details: { ...e.details, deviceId: e.deviceId },
      })),
    recordStatus: (tenant, d) =>
      s.devices.recordStatus(tenant, d.deviceId, {
        status: d.status,
        ...(d.lastHeartbeatAt ? { lastHeartbeatAt: new Date(d.lastHeartbeatAt) } : {}),
        ...(d.info ? { info: d.info } : {}),
      }),
  };
}

/** The product's actor behaviours (call, meeting, device), wired to the services they use. */
export function actorBehaviours(s: ActorServices, t: ActorTimings): ActorBehavior<any, any, any>[] {
  return [callActor(callDeps(s, t)), meetingActor(meetingDeps(s)), deviceActor(deviceDeps(s, t))];
}
