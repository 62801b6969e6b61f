import { z } from 'zod';
import { Id } from '../../kernel/paging.js';
import type { AuditFilter } from './audit.service.js';

const Action = z
  .string()
  .regex(/^[A-Za-z_]+(\.[A-Za-z_]+)*$/, 'an action name such as signin.success or recording.start')
  .max(80);
const Instant = z.coerce.date().refine((d) => !Number.isNaN(d.getTime()), 'must be an ISO 8601 time');

/** Filter and page of a trail read (docs/audit.md): every field narrows; `before` is the `next` of a page. */
export const AuditQuery = z.object({
  action: Action.optional(),
  actorId: Id.optional(),
  subjectId: Id.optional(),
  eventId: Id.optional().describe('the consultation'),
  from: Instant.optional().describe('entries at or after this time'),
  to: Instant.optional().describe('entries before this time'),
  before: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe('entries before this position'),
  take: z.coerce.number().int().min(1).default(50).describe('at most 500'),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

/** The repository filter of a parsed query. */
export function auditFilterOf(q: AuditQuery): AuditFilter {
  return {
    action: q.action,
    actorId: q.actorId,
    subjectId: q.subjectId,
    eventId: q.eventId,
    from: q.from,
    to: q.to,
    beforeSeq: q.before,
  };
}
