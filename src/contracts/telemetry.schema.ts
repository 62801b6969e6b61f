import { z } from 'zod';
import { AppError, fromZod } from '../kernel/errors.js';

/** Upper bound of messages per unary batch (and per stored chunk of a stream). */
export const MAX_BATCH = 500;

const Hex24 = z.string().regex(/^[a-f0-9]{24}$/, 'must be 24 hexadecimal digits');
const Key = z.string().min(1).max(200);
const Timestamp = z
  .object({
    seconds: z.union([z.string(), z.number()]).transform(Number).pipe(z.number().int().min(0).max(253402300799)),
    nanos: z.number().int().min(0).max(999_999_999),
  })
  .transform((t) => new Date(t.seconds * 1000 + Math.floor(t.nanos / 1e6)));

/** The wire fields of every message, after proto decoding (camelCase, uint64 as string). */
export const TelemetryEventWire = z.object({
  conferenceId: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits and _ . : - only'),
  eventId: Hex24,
  sequence: z
    .union([z.string(), z.number()])
    .transform(Number)
    .pipe(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)),
  occurredAt: Timestamp,
  payload: z.enum(
    ['participantJoined', 'participantLeft', 'recordingStarted', 'recordingStopped', 'chatActivity', 'conferenceEnded'],
    { message: 'exactly one payload is required' },
  ),
});

/** Each payload's schema and the record type it is stored as. */
const PAYLOADS = {
  participantJoined: {
    type: 'participant_joined',
    schema: z.object({
      participantKey: Key,
      userId: z.union([z.literal(''), Hex24]),
      displayName: z.string().max(200),
      device: z.string().max(100).default(''),
    }),
  },
  participantLeft: { type: 'participant_left', schema: z.object({ participantKey: Key }) },
  recordingStarted: { type: 'recording_started', schema: z.object({ recordingId: z.string().max(200) }) },
  recordingStopped: { type: 'recording_stopped', schema: z.object({ recordingId: z.string().max(200) }) },
  chatActivity: { type: 'chat_activity', schema: z.object({ messageCount: z.number().int().min(0) }) },
  conferenceEnded: { type: 'conference_ended', schema: z.object({ reason: z.string().max(200) }) },
} as const;

export type TelemetryType = (typeof PAYLOADS)[keyof typeof PAYLOADS]['type'];

/** One validated message, in the form the telemetry repository stores (NewTelemetryRecord). */
export interface TelemetryEvent {
  conferenceId: string;
  sequence: number;
  eventId: string;
  type: TelemetryType;
  occurredAt: Date;
  payload: Record<string, unknown>;
}

/** Validates one decoded message; errors name the field as `events[i].field`. */
export function toRecord(raw: unknown, index: number): TelemetryEvent {
  const field = `events[${index}]`;
  const base = TelemetryEventWire.safeParse(raw);
  if (!base.success) throw fromZod(base.error, field);
  const def = PAYLOADS[base.data.payload];
  const body = def.schema.safeParse((raw as Record<string, unknown>)[base.data.payload]);
  if (!body.success) throw fromZod(body.error, `${field}.${base.data.payload}`);
  return {
    conferenceId: base.data.conferenceId,
    sequence: base.data.sequence,
    eventId: base.data.eventId,
    type: def.type,
    occurredAt: base.data.occurredAt,
    payload: body.data as Record<string, unknown>,
  };
}

export function toRecords(raw: readonly unknown[], offset = 0): TelemetryEvent[] {
  if (raw.length > MAX_BATCH)
    throw new AppError('validation_failed', `events: at most ${MAX_BATCH} per batch`, {
      errors: [{ field: 'events', message: `at most ${MAX_BATCH}` }],
    });
  return raw.map((r, i) => toRecord(r, offset + i));
}
