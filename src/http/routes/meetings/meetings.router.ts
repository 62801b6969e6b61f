import { op, type RouteGroup } from '../route-spec.js';
import {
  AdmitResult,
  DenyResult,
  JoinOrWait,
  RapidConnectUserInfo,
  WaitingRoom,
  presentJoinOrWait,
  presentRapidConnect,
} from '../../presenters/meeting.presenter.js';
import { AdmitBody, ConsentAnswerBody, DenyBody } from '../../../contracts/meeting.schema.js';
import { consentToRecording } from '../../../actors/meeting/meeting-rooms.js';
import { ConsentAnswerResult } from '../../presenters/recording-consent.presenter.js';
import { DeviceIdParams, EventIdParams, MeetingCodeParams } from './meetings.schema.js';
import { meetingControlRoutes } from './meeting-controls.routes.js';
import { RULE_NOTES } from '../../../kernel/requirement.js';

const HOST_ERRORS = ['event_not_found', 'meeting_not_found', 'not_meeting_host', 'not_owner', 'timeout'] as const;

/** /api/meetings: join by code (guests, headsets, QR) and rapid connect. */
export const meetingRoutes: RouteGroup = {
  base: '/api/meetings',
  tag: 'Meetings',
  routes: [
    op({
      operationId: 'meetings.join',
      requires: 'meetings:join',
      errors: ['meeting_not_found', 'event_not_found', 'forbidden', 'invalid_state', 'not_owner', 'timeout'],
      method: 'post',
      path: '/join/:meetingCode',
      params: MeetingCodeParams,
      response: JoinOrWait,
      summary: 'Join a meeting by its code; returns the room details of the video conferencing system',
      description:
        'The code is the capability: a caller who is not part of the event joins as a guest. Joining starts a scheduled meeting. ' +
        "When the meeting has a waiting room, a patient, guest or headset gets `status: 'waiting'` with its position instead; " +
        'the `waitingRoom` hub push carries the JoinResponse once a host admits them, and joining again then returns it.',
      handle: async (s, { p, params }) => presentJoinOrWait(await s.meetingRooms.joinByCode(p, params.meetingCode)),
    }),
    op({
      operationId: 'meetings.waiting',
      requires: 'meetings:host',
      note: RULE_NOTES.hostOfEvent,
      errors: [...HOST_ERRORS],
      method: 'get',
      path: '/:eventId/waiting',
      params: EventIdParams,
      response: WaitingRoom,
      summary: "The meeting's waiting queue, in arrival order (hosts of the event)",
      handle: async (s, { p, params }) => WaitingRoom.parse(await s.meetingRooms.waiting(p, params.eventId)),
    }),
    op({
      operationId: 'meetings.admit',
      requires: 'meetings:host',
      note: RULE_NOTES.hostOfEvent,
      errors: [...HOST_ERRORS, 'waiting_entry_not_found', 'validation_failed', 'invalid_state'],
      method: 'post',
      path: '/:eventId/admit',
      params: EventIdParams,
      body: AdmitBody,
      response: AdmitResult,
      summary: 'Admit one waiting entry (userId) or all; the admitted get their join details by the waitingRoom push',
      description: 'Idempotent: admitting someone already admitted, or repeating a requestId, admits nobody twice.',
      handle: async (s, { p, params, body }) =>
        AdmitResult.parse(await s.meetingRooms.admit(p, { ...body, eventId: params.eventId })),
    }),
    op({
      operationId: 'meetings.deny',
      requires: 'meetings:host',
      note: RULE_NOTES.hostOfEvent,
      errors: [...HOST_ERRORS, 'waiting_entry_not_found', 'validation_failed'],
      method: 'post',
      path: '/:eventId/deny',
      params: EventIdParams,
      body: DenyBody,
      response: DenyResult,
      summary: 'Deny one waiting entry (userId) or all, with an optional message; they must be admitted to come back',
      handle: async (s, { p, params, body }) =>
        DenyResult.parse(await s.meetingRooms.deny(p, { ...body, eventId: params.eventId })),
    }),
    op({
      operationId: 'meetings.recordingConsent',
      requires: 'meetings:join',
      note: RULE_NOTES.askedForConsent,
      errors: [
        'event_not_found',
        'consent_request_not_found',
        'consent_not_required',
        'consent_already_given',
        'invalid_state',
        'validation_failed',
        'not_owner',
        'timeout',
      ],
      method: 'post',
      path: '/:eventId/recording-consent',
      params: EventIdParams,
      body: ConsentAnswerBody,
      response: ConsentAnswerResult,
      summary: "Answer a recording consent request (the hub's consentToRecording): yes or no, once per request",
      description:
        'The recording starts when everyone the tenant policy asks has said yes; a no cancels the request and the ' +
        'requester and hosts learn who refused. A joiner held while a recording runs enters the meeting on yes (decision 910).',
      handle: async (s, { p, params, body }) =>
        ConsentAnswerResult.parse(await consentToRecording(s.meetingRooms, p, { ...body, eventId: params.eventId })),
    }),
    op({
      operationId: 'meetings.startRapidConnect',
      requires: 'meetings:host',
      note: 'also events:write: it creates the event the caller hosts',
      errors: ['device_not_found', 'forbidden', 'permission_denied', 'invalid_state', 'not_owner', 'timeout'],
      method: 'post',
      path: '/startRapidConnect/:deviceId',
      params: DeviceIdParams,
      response: RapidConnectUserInfo,
      summary: 'Start an ad-hoc consultation with a device now; returns RapidConnectUserInfo',
      handle: async (s, { p, params }) => presentRapidConnect(await s.meetings.startRapidConnect(p, params.deviceId)),
    }),
    ...meetingControlRoutes,
  ],
};
