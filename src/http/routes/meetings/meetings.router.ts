import { op, type RouteGroup } from '../route-spec.js';
import {
  JoinResponse,
  RapidConnectUserInfo,
  presentJoinResponse,
  presentRapidConnect,
} from '../../presenters/meeting.presenter.js';
import { DeviceIdParams, MeetingCodeParams } from './meetings.schema.js';

/** /api/meetings: join by code (guests, headsets, QR) and rapid connect. */
export const meetingRoutes: RouteGroup = {
  base: '/api/meetings',
  tag: 'Meetings',
  routes: [
    op({
      operationId: 'meetings.join',
      errors: ['meeting_not_found', 'event_not_found', 'forbidden', 'invalid_state', 'not_owner', 'timeout'],
      method: 'post',
      path: '/join/:meetingCode',
      params: MeetingCodeParams,
      response: JoinResponse,
      summary: 'Join a meeting by its code; returns the room details of the video conferencing system',
      description:
        'The code is the capability: a caller who is not part of the event joins as a guest. Joining starts a scheduled meeting.',
      handle: async (s, { p, params }) =>
        presentJoinResponse(
          await s.meetings.joinByCode(p.tenant, params.meetingCode, { kind: 'principal', principal: p }),
        ),
    }),
    op({
      operationId: 'meetings.startRapidConnect',
      errors: ['device_not_found', 'forbidden', 'permission_denied', 'invalid_state', 'not_owner', 'timeout'],
      method: 'post',
      path: '/startRapidConnect/:deviceId',
      params: DeviceIdParams,
      response: RapidConnectUserInfo,
      summary: 'Start an ad-hoc consultation with a device now; returns RapidConnectUserInfo',
      handle: async (s, { p, params }) => presentRapidConnect(await s.meetings.startRapidConnect(p, params.deviceId)),
    }),
  ],
};
