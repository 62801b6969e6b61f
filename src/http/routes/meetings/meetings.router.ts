import type { Router } from 'express';
import type { Services } from '../../../composition.js';
import { op, routerFor, type RouteGroup } from '../../openapi/route-spec.js';
import { JoinResponse, RapidConnectUserInfo, presentJoinResponse, presentRapidConnect } from '../../presenters/meeting.presenter.js';
import { DeviceIdParams, MeetingCodeParams } from './meetings.schema.js';

/** /api/meetings: join by code (guests, headsets, QR) and rapid connect. */
export const meetingRoutes: RouteGroup = {
  base: '/api/meetings',
  tag: 'Meetings',
  routes: [
    op({
      operationId: 'meetings.join', method: 'post', path: '/join/:meetingCode', params: MeetingCodeParams, response: JoinResponse,
      summary: 'Join a meeting by its code; returns the room details of the video conferencing system',
      description: 'The code is the capability: a caller who is not part of the event joins as a guest. Joining starts a scheduled meeting.',
      handle: async (s, { p, params }) => presentJoinResponse(await s.meetings.joinByCode(p.tenant, params.meetingCode, { kind: 'principal', principal: p })),
    }),
    op({
      operationId: 'meetings.startRapidConnect', method: 'post', path: '/startRapidConnect/:deviceId', params: DeviceIdParams, response: RapidConnectUserInfo,
      summary: 'Start an ad-hoc consultation with a device now; returns RapidConnectUserInfo',
      handle: async (s, { p, params }) => presentRapidConnect(await s.meetings.startRapidConnect(p, params.deviceId)),
    }),
  ],
};

export function meetingsRouter(services: Services): Router {
  return routerFor(meetingRoutes, services);
}
