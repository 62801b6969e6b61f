import { z } from 'zod';
import type { EventFileView, LedgerView, StoredFile } from '../../core/media/records.service.js';
import { IsoDate, iso } from './common.presenter.js';

/** One row of an event's ledger: who was in the consultation, when, for how long, from which device. */
export const LedgerEntry = z.object({
  participantKey: z.string().describe('Identity in the conference room (user id, `device:<id>` or `guest:<id>`)'),
  userId: z.string().nullable().describe('The user, when the participant is a known user'),
  displayName: z.string().nullable(),
  device: z
    .string()
    .nullable()
    .describe('The client the participant joined from, as the conferencing system reported it'),
  deviceId: z.string().nullable().describe('The headset, when the participant is a device attached to the event'),
  joinedAt: IsoDate,
  leftAt: IsoDate.nullable(),
  durationSeconds: z.number().int(),
  conferenceId: z.string(),
  recordingConsents: z
    .array(
      z.object({
        requestId: z.string(),
        consent: z.boolean(),
        at: IsoDate,
        late: z.boolean().describe('Answered on joining while the recording ran'),
      }),
    )
    .describe("This participant's answers to recording consent requests (decision 910), oldest first"),
});

/** A stored file as the file lists show it; URLs are relative to the tenant host (the download routes). */
export const FileItem = z.object({
  id: z.string(),
  fileName: z.string(),
  size: z.number().int(),
  contentType: z.string(),
  kind: z.string().describe('image, video, audio, document, recording or other'),
  ownerId: z.string(),
  eventId: z.string().nullable(),
  sessionId: z.string().nullable(),
  hash: z.string(),
  url: z.string().describe('GET /api/media/download/{tenant}/{hash}'),
  thumbnailStatus: z.string().describe('none, pending, ready or failed'),
  thumbnailUrl: z.string().nullable().describe('GET /api/media/thumbnail/{tenant}/{hash}, for images'),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  createdAt: IsoDate.nullable(),
});

export const EventFile = FileItem.extend({
  source: z.enum(['recording', 'upload', 'attachment']).describe('How the file belongs to the event'),
  attached: z.boolean().describe("On the event's attachment list"),
});

export function presentLedgerEntry({ row, event }: LedgerView): z.infer<typeof LedgerEntry> {
  const userId = row.userId ? String(row.userId) : null;
  const devices = new Set((event.deviceIds ?? []).map(String));
  const deviceId = row.participantKey.startsWith('device:')
    ? row.participantKey.slice('device:'.length)
    : userId && devices.has(userId)
      ? userId
      : null;
  return {
    participantKey: row.participantKey,
    userId,
    displayName: row.displayName ?? null,
    device: row.device ?? null,
    deviceId,
    joinedAt: row.joinedAt.toISOString(),
    leftAt: iso(row.leftAt),
    durationSeconds: row.durationSeconds ?? 0,
    conferenceId: row.conferenceId,
    recordingConsents: (row.recordingConsents ?? []).map((c) => ({
      requestId: String(c.requestId),
      consent: !!c.consent,
      at: new Date(c.at as Date).toISOString(),
      late: !!c.late,
    })),
  };
}

export function presentFile(tenant: string, f: StoredFile): z.infer<typeof FileItem> {
  return {
    id: String(f._id),
    fileName: f.fileName,
    size: f.size,
    contentType: f.contentType,
    kind: f.kind,
    ownerId: String(f.ownerId),
    eventId: f.eventId ? String(f.eventId) : null,
    sessionId: f.sessionId ?? null,
    hash: f.hash,
    url: `/api/media/download/${tenant}/${f.hash}`,
    thumbnailStatus: f.thumbnailStatus ?? 'none',
    thumbnailUrl: f.kind === 'image' ? `/api/media/thumbnail/${tenant}/${f.hash}` : null,
    width: f.width ?? null,
    height: f.height ?? null,
    createdAt: iso(f.get('createdAt') as Date | undefined),
  };
}

export function presentEventFile(tenant: string, v: EventFileView): z.infer<typeof EventFile> {
  return { ...presentFile(tenant, v.file), source: v.source, attached: v.attached };
}
