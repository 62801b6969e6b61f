import { z } from 'zod';
import { Id, Paging } from '../../kernel/paging.js';

const When = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });

export const EventParticipantInput = z.object({
  userId: Id,
  role: z.enum(['host', 'participant']).default('participant'),
});

const EventFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(4000).optional(),
  startAt: When,
  endAt: When,
  participants: z.array(EventParticipantInput).max(200).default([]),
  /** MediaFile ids (uploaded through /api/media/upload) attached to the event. */
  attachments: z.array(Id).max(50).default([]),
  /** Overrides the tenant's waiting room setting for this event's meeting (decision 870); absent = the tenant's. */
  waitingRoom: z.boolean().optional(),
};

/** CreateEventCommand: the organizer is the caller and always a host. */
export const CreateEventCommand = z.object(EventFields);
export type CreateEventCommand = z.infer<typeof CreateEventCommand>;

/** UpdateEventCommand: only given fields change; participants and attachments are replaced whole. */
export const UpdateEventCommand = z.object({
  eventId: Id,
  name: EventFields.name.optional(),
  description: EventFields.description,
  startAt: When.optional(),
  endAt: When.optional(),
  participants: z.array(EventParticipantInput).max(200).optional(),
  attachments: z.array(Id).max(50).optional(),
  waitingRoom: z
    .boolean()
    .nullable()
    .optional()
    .describe('true/false overrides the tenant setting; null returns to it'),
});
export type UpdateEventCommand = z.infer<typeof UpdateEventCommand>;

/** DeleteEventsCommand: cancels each listed event the caller organizes. */
export const DeleteEventsCommand = z.object({
  eventIds: z.array(Id).min(1).max(100),
  reason: z.string().max(500).optional(),
});
export type DeleteEventsCommand = z.infer<typeof DeleteEventsCommand>;

export const EventListQuery = Paging.extend({ name: z.string().trim().max(200).optional() });
export type EventListQuery = z.infer<typeof EventListQuery>;

/** Longest consultation accepted; protects calendars from typos in years. */
export const MAX_EVENT_HOURS = 24;
