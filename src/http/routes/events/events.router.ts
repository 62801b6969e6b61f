import { z } from 'zod';
import { op, type RouteGroup } from '../route-spec.js';
import { PageOf, presentPage } from '../../presenters/common.presenter.js';
import {
  CancelEventsResult,
  EventDetails,
  EventParticipant,
  EventSummary,
  presentEventDetails,
  presentEventParticipant,
  presentEventSummary,
} from '../../presenters/event.presenter.js';
import {
  CreateEventCommand,
  DeleteEventsCommand,
  EventIdParams,
  EventListQuery,
  UpdateEventCommand,
} from './events.schema.js';

/** /api/events: scheduled consultations the caller organizes, attends or is attached to. */
export const eventRoutes: RouteGroup = {
  base: '/api/events',
  tag: 'Events',
  routes: [
    op({
      operationId: 'events.list',
      method: 'get',
      path: '/get',
      query: EventListQuery,
      response: PageOf(EventSummary),
      summary: "The caller's events, newest first, optionally filtered by name; paged",
      handle: async (s, { p, query }) => presentPage(await s.events.list(p, query), presentEventSummary),
    }),
    op({
      operationId: 'events.get',
      errors: ['event_not_found'],
      method: 'get',
      path: '/get/:eventId',
      params: EventIdParams,
      response: EventDetails,
      summary: 'Event details',
      handle: async (s, { p, params }) => presentEventDetails(await s.events.details(p, params.eventId)),
    }),
    op({
      operationId: 'events.getParticipants',
      errors: ['event_not_found'],
      method: 'get',
      path: '/getParticipants/:eventId',
      params: EventIdParams,
      response: z.array(EventParticipant),
      summary: 'Participants of an event with their role and online state',
      handle: async (s, { p, params }) =>
        (await s.events.participants(p, params.eventId)).map((x) => presentEventParticipant(p.tenant, x)),
    }),
    op({
      operationId: 'events.create',
      links: {
        get: { operationId: 'events.get', parameters: { eventId: '$response.body#/id' } },
        participants: { operationId: 'events.getParticipants', parameters: { eventId: '$response.body#/id' } },
        update: { operationId: 'events.update', requestBody: { eventId: '$response.body#/id', name: 'Moved consult' } },
        cancel: { operationId: 'events.cancel', requestBody: { eventIds: ['$response.body#/id'] } },
        join: { operationId: 'meetings.join', parameters: { meetingCode: '$response.body#/meetingCode' } },
      },
      errors: ['contact_not_found', 'device_not_found'],
      method: 'post',
      path: '/create',
      body: CreateEventCommand,
      response: EventDetails,
      status: 201,
      summary: 'Create an event (CreateEventCommand); the caller is its organizer and a host',
      handle: async (s, { p, body }) => presentEventDetails(await s.events.create(p, body)),
    }),
    op({
      operationId: 'events.update',
      errors: ['event_not_found', 'forbidden', 'invalid_state'],
      method: 'post',
      path: '/update',
      body: UpdateEventCommand,
      response: EventDetails,
      summary: 'Update a scheduled event the caller organizes (UpdateEventCommand)',
      handle: async (s, { p, body }) => presentEventDetails(await s.events.update(p, body)),
    }),
    op({
      operationId: 'events.cancel',
      errors: ['event_not_found', 'forbidden', 'invalid_state'],
      method: 'post',
      path: '/cancel',
      body: DeleteEventsCommand,
      response: CancelEventsResult,
      summary: 'Cancel scheduled events the caller organizes (DeleteEventsCommand); reports each id',
      handle: (s, { p, body }) => s.events.cancel(p, body),
    }),
  ],
};
