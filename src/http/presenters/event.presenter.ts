import { z } from 'zod';
import type { EventRecord } from '../../data/models/event.model.js';
import type { EventParticipantView } from '../../core/meetings/event.service.js';
import { EVENT_STATUSES } from '../../core/meetings/event-status.js';
import { IsoDate, iso } from './common.presenter.js';
import { ContactSummary, presentContactSummary } from './contact.presenter.js';
import { RecordingConsentEntry, presentRecordingConsents } from './recording-consent.presenter.js';

export const EventSummary = z.object({
  id: z.string(),
  name: z.string(),
  startAt: IsoDate,
  endAt: IsoDate,
  status: z.enum(EVENT_STATUSES),
  organizerId: z.string(),
  participantCount: z.number().int(),
  hasLedger: z.boolean(),
  hasRecording: z.boolean(),
  hasChat: z.boolean(),
});

export const EventDetails = EventSummary.extend({
  description: z.string().nullable(),
  meetingCode: z.string(),
  waitingRoom: z.boolean().nullable().describe("The event's waiting room override; null = the tenant's setting"),
  participants: z.array(z.object({ userId: z.string(), role: z.enum(['host', 'participant', 'guest']) })),
  deviceIds: z.array(z.string()),
  attachments: z.array(z.object({ mediaFileId: z.string(), name: z.string(), hash: z.string() })),
  room: z
    .object({ provider: z.string(), roomName: z.string(), url: z.string(), assignedAt: IsoDate.nullable() })
    .nullable(),
  startedAt: IsoDate.nullable(),
  endedAt: IsoDate.nullable(),
  completedAt: IsoDate.nullable(),
  cancelledAt: IsoDate.nullable(),
  recordingConsents: z
    .array(RecordingConsentEntry)
    .describe('Recording consent answers, in the order given: who, when, what was asked, the answer (decision 910)'),
});

export const EventParticipant = ContactSummary.omit({ favourite: true }).extend({
  role: z.enum(['host', 'participant', 'guest']),
});

export const CancelEventsResult = z.object({
  cancelled: z.array(z.string()),
  failed: z.array(z.object({ eventId: z.string(), code: z.enum(['event_not_found', 'invalid_state']) })),
});

export function presentEventSummary(e: EventRecord): z.infer<typeof EventSummary> {
  return {
    id: String(e._id),
    name: e.name,
    startAt: e.startAt.toISOString(),
    endAt: e.endAt.toISOString(),
    status: e.status as z.infer<typeof EventSummary>['status'],
    organizerId: String(e.organizerId),
    participantCount: e.participants.length,
    hasLedger: !!e.hasLedger,
    hasRecording: !!e.hasRecording,
    hasChat: !!e.hasChat,
  };
}

export function presentEventDetails(e: EventRecord): z.infer<typeof EventDetails> {
  const room = e.room?.roomName
    ? {
        provider: e.room.provider ?? '',
        roomName: e.room.roomName,
        url: e.room.url ?? '',
        assignedAt: iso(e.room.assignedAt),
      }
    : null;
  return {
    ...presentEventSummary(e),
    description: e.description ?? null,
    meetingCode: e.meetingCode,
    waitingRoom: typeof e.waitingRoom === 'boolean' ? e.waitingRoom : null,
    participants: e.participants.map((p) => ({
      userId: String(p.userId),
      role: p.role as 'host' | 'participant' | 'guest',
    })),
    deviceIds: (e.deviceIds ?? []).map(String),
    attachments: e.attachments.map((a) => ({ mediaFileId: String(a.mediaFileId), name: a.name, hash: a.hash })),
    room,
    startedAt: iso(e.startedAt),
    endedAt: iso(e.endedAt),
    completedAt: iso(e.completedAt),
    cancelledAt: iso(e.cancelledAt),
    recordingConsents: presentRecordingConsents(e),
  };
}

export function presentEventParticipant(tenant: string, p: EventParticipantView): z.infer<typeof EventParticipant> {
  const { favourite: _unused, ...contact } = presentContactSummary(tenant, {
    user: p.user,
    online: p.online,
    favourite: false,
  });
  return { ...contact, role: p.role };
}
