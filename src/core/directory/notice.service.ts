import { z } from 'zod';
import type { Principal } from '../../kernel/principal.js';
import type { NoticeRecord, NoticeRepository } from '../../data/repositories/notice.repository.js';
import { AppError } from '../../kernel/errors.js';
import { oid } from '../../kernel/object-id.js';

export const SaveNoticeCommand = z.object({
  title: z.string().trim().min(1).max(200),
  body: z.string().trim().min(1).max(5000),
  severity: z.enum(['info', 'warning', 'critical']).default('info'),
});
export type SaveNoticeCommand = z.infer<typeof SaveNoticeCommand>;

/** The current notice for one user, with whether (and when) they acknowledged it. */
export interface MyNotice {
  notice: NoticeRecord;
  seen: boolean;
  seenAt: Date | null;
}

/**
 * Tenant-wide system notice: save replaces the current one, clear retires it, users acknowledge it
 * by id. Lifecycle (docs/decisions/203-notice-lifecycle.md): current -> retired (replaced or cleared).
 */
export class NoticeService {
  constructor(private readonly deps: { notices: (tenant: string) => NoticeRepository }) {}

  save(p: Principal, cmd: SaveNoticeCommand): Promise<NoticeRecord> {
    return this.deps.notices(p.tenant).replaceCurrent({ ...cmd, createdBy: oid(p.userId, 'user_not_found') });
  }

  async clear(p: Principal): Promise<{ cleared: boolean }> {
    return { cleared: (await this.deps.notices(p.tenant).clearCurrent()) > 0 };
  }

  current(p: Principal): Promise<NoticeRecord | null> {
    return this.deps.notices(p.tenant).current();
  }

  /** Acknowledges a notice by id (idempotent); a retired notice can still be acknowledged. */
  async seen(p: Principal, noticeId: string): Promise<{ noticeId: string; seen: true }> {
    const repo = this.deps.notices(p.tenant);
    const id = oid(noticeId, 'notice_not_found');
    if (!(await repo.findById(id))) throw new AppError('notice_not_found', `No notice ${noticeId}`);
    await repo.acknowledge(id, oid(p.userId, 'user_not_found'));
    return { noticeId: String(id), seen: true };
  }

  async mine(p: Principal): Promise<MyNotice | null> {
    const repo = this.deps.notices(p.tenant);
    const notice = await repo.current();
    if (!notice) return null;
    const seenAt = await repo.acknowledgedAt(notice._id, oid(p.userId, 'user_not_found'));
    return { notice, seen: !!seenAt, seenAt };
  }
}
