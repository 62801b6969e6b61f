import type { Types } from 'mongoose';

interface ConsultationLike {
  status?: string;
  startAt?: Date;
  endAt?: Date;
  organizerId?: Types.ObjectId;
  participants?: { userId: Types.ObjectId; role: string }[];
  startedAt?: Date | null;
  endedAt?: Date | null;
  completedAt?: Date | null;
  cancelledAt?: Date | null;
  hasLedger?: boolean | null;
  hasRecording?: boolean | null;
  hasChat?: boolean | null;
}

const iso = (d?: Date | null) => (d ? new Date(d).toISOString() : undefined);

/**
 * The `data` of a consultation event: ids, times, status and flags; no names or descriptions (the
 * receiver reads those over the API with its own authorization), so a payload carries no clinical text.
 */
export function consultationData(e: ConsultationLike): Record<string, unknown> {
  const out: Record<string, unknown> = {
    status: e.status,
    scheduledStart: iso(e.startAt),
    scheduledEnd: iso(e.endAt),
    organizerId: e.organizerId ? String(e.organizerId) : undefined,
    participants: e.participants?.map((p) => ({ userId: String(p.userId), role: p.role })),
    startedAt: iso(e.startedAt),
    endedAt: iso(e.endedAt),
    completedAt: iso(e.completedAt),
    cancelledAt: iso(e.cancelledAt),
  };
  if (e.status === 'completed')
    Object.assign(out, {
      hasLedger: Boolean(e.hasLedger),
      hasRecording: Boolean(e.hasRecording),
      hasChat: Boolean(e.hasChat),
    });
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}
