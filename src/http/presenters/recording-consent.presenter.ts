import { z } from 'zod';
import type { EventRecord } from '../../data/models/event.model.js';

const Policy = z.enum(['all', 'patients']);

/** What a person is asked (recordingConsentRequested push; the held joiner's ack). */
export const ConsentAsk = z.object({
  eventId: z.string(),
  requestId: z
    .string()
    .describe('Answer with consentToRecording (hub) or POST /api/meetings/{eventId}/recording-consent'),
  question: z.string(),
  reason: z.string().optional(),
  policy: Policy,
  requestedBy: z.string(),
  requestedAt: z.string(),
  expiresAt: z.string(),
  required: z.boolean(),
  late: z.boolean().optional().describe('Joined while the recording runs: enters once they agree'),
});

/** The ack of a join while a consented recording runs (decision 910). */
export const ConsentRequiredAck = z.object({
  status: z.literal('consentRequired'),
  eventId: z.string(),
  since: z.string(),
  recordingConsent: ConsentAsk,
});

export const ConsentView = z.object({
  requestId: z.string(),
  state: z.enum(['pending', 'granted', 'refused', 'timedOut']),
  policy: Policy,
  requestedBy: z.string(),
  requestedAt: z.string(),
  expiresAt: z.string(),
  reason: z.string().optional(),
  required: z.array(
    z.object({ userId: z.string(), username: z.string(), consent: z.boolean().optional(), at: z.string().optional() }),
  ),
  held: z.array(z.object({ userId: z.string(), username: z.string(), since: z.string(), requestId: z.string() })),
});

/** consentToRecording's answer: the request's state; for a held joiner, their join details or waiting place. */
export const ConsentAnswerResult = z.object({
  requestId: z.string(),
  state: z.enum(['pending', 'granted', 'refused', 'timedOut']),
  consent: z.boolean(),
  recordingConsent: ConsentView.optional(),
  entered: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'A held joiner who agreed: their join details (MeetingData or JoinResponse) or `waiting` with a position',
    ),
});

/** One stored answer, as the event details show it. */
export const RecordingConsentEntry = z.object({
  requestId: z.string(),
  userId: z.string(),
  username: z.string(),
  role: z.string().describe('The role in the meeting'),
  tenantRole: z.string(),
  question: z.string().describe('What was asked'),
  reason: z.string().nullable(),
  policy: Policy,
  requestedBy: z.string().nullable(),
  requestedAt: z.string(),
  consent: z.boolean(),
  at: z.string(),
  late: z.boolean().describe('Given on joining while the recording ran'),
  implicit: z.boolean().describe("The requester's own request, counted as their consent"),
});

export function presentRecordingConsents(e: EventRecord): z.infer<typeof RecordingConsentEntry>[] {
  return (e.recordingConsents ?? []).map((c) => ({
    requestId: c.requestId,
    userId: String(c.userId),
    username: c.username,
    role: c.role,
    tenantRole: c.tenantRole ?? '',
    question: c.question,
    reason: c.reason ?? null,
    policy: c.policy as 'all' | 'patients',
    requestedBy: c.requestedBy ? String(c.requestedBy) : null,
    requestedAt: new Date(c.requestedAt).toISOString(),
    consent: c.consent,
    at: new Date(c.at).toISOString(),
    late: !!c.late,
    implicit: !!c.implicit,
  }));
}
