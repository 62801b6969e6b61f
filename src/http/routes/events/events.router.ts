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
import { EventFile, LedgerEntry, presentEventFile, presentLedgerEntry } from '../../presenters/records.presenter.js';
import { Paging } from '../../../kernel/paging.js';
import {
  CreateEventCommand,
  DeleteEventsCommand,
  EventIdParams,
  EventListQuery,
  UpdateEventCommand,
} from './events.schema.js';
import { RULE_NOTES } from '../../../kernel/requirement.js';

/** How many files the event details carry; the rest are paged by GET /api/events/{eventId}/files. */
const DETAILS_FILES = 20;

const EventDetailsWithFiles = EventDetails.extend({
  files: PageOf(EventFile).describe("The first page of the event's files (GET /api/events/{eventId}/files)"),
});

/** /api/events: scheduled consultations the caller organizes, attends or is attached to. */
export const eventRoutes: RouteGroup = {
  base: '/api/events',
  tag: 'Events',
  routes: [
    op({
      operationId: 'events.list',
      requires: 'events:read',
      method: 'get',
      path: '/get',
      query: EventListQuery,
      response: PageOf(EventSummary),
      summary: "The caller's events, newest first, optionally filtered by name; paged",
      handle: async (s, { p, query }) => presentPage(await s.events.list(p, query), presentEventSummary),
    }),
    op({
      operationId: 'events.get',
      requires: 'events:read',
      errors: ['event_not_found'],
      method: 'get',
      path: '/get/:eventId',
      params: EventIdParams,
      response: EventDetailsWithFiles,
      summary: "Event details, with the first page of the event's files",
      description: 'Page on with GET /api/events/{eventId}/files.',
      handle: async (s, { p, params }) => {
        const event = await s.events.details(p, params.eventId);
        const files = await s.records.filesOf(p, event, { skip: 0, take: DETAILS_FILES });
        return { ...presentEventDetails(event), files: presentPage(files, (f) => presentEventFile(p.tenant, f)) };
      },
    }),
    op({
      operationId: 'events.ledger',
      requires: 'events:read',
      note: RULE_NOTES.ledgerReader,
      errors: ['event_not_found', 'not_meeting_host'],
      method: 'get',
      path: '/:eventId/ledger',
      params: EventIdParams,
      query: Paging,
      response: PageOf(LedgerEntry),
      summary: "The consultation's ledger: who joined, when, for how long, from which device; paged",
      description:
        'Written by telemetry completion (hasLedger). Hosts of the event and tenant administrators; another member gets not_meeting_host.',
      handle: async (s, { p, params, query }) =>
        presentPage(await s.records.ledger(p, params.eventId, query), presentLedgerEntry),
    }),
    op({
      operationId: 'events.files',
      requires: 'media:read',
      note: 'the media access rule: a member of the event (organizer, participant, attached device) or tenant:admin',
      errors: ['event_not_found'],
      method: 'get',
      path: '/:eventId/files',
      params: EventIdParams,
      query: Paging,
      response: PageOf(EventFile),
      summary: "The event's files: uploaded for it, its recordings and its attachments, newest first; paged",
      description:
        'Members of the event (organizer, participants, attached devices) and tenant administrators. Each item carries its download and thumbnail URLs.',
      handle: async (s, { p, params, query }) =>
        presentPage(await s.records.eventFiles(p, params.eventId, query), (f) => presentEventFile(p.tenant, f)),
    }),
    op({
      operationId: 'events.getParticipants',
      requires: 'events:read',
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
      requires: 'events:write',
      links: {
        get: { operationId: 'events.get', parameters: { eventId: '$response.body#/id' } },
        participants: { operationId: 'events.getParticipants', parameters: { eventId: '$response.body#/id' } },
        ledger: { operationId: 'events.ledger', parameters: { eventId: '$response.body#/id' } },
        files: { operationId: 'events.files', parameters: { eventId: '$response.body#/id' } },
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
      requires: 'events:write',
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
      requires: 'events:cancel',
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
