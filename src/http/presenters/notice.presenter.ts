import { z } from 'zod';
import type { NoticeRecord } from '../../data/models/notice.model.js';
import type { MyNotice } from '../../core/directory/notice.service.js';
import { IsoDate, iso } from './common.presenter.js';

export const Notice = z.object({
  id: z.string(),
  title: z.string(),
  body: z.string(),
  severity: z.enum(['info', 'warning', 'critical']),
  current: z.boolean(),
  createdAt: IsoDate,
});
export type Notice = z.infer<typeof Notice>;

/** GET /api/notification/current: `notice` is null when no notice is current. */
export const CurrentNotice = z.object({ notice: Notice.nullable() });

export const MyNoticeView = Notice.extend({ seen: z.boolean(), seenAt: IsoDate.nullable() });

export function presentNotice(n: NoticeRecord): Notice {
  return {
    id: String(n._id),
    title: n.title,
    body: n.body,
    severity: (n.severity ?? 'info') as Notice['severity'],
    current: !!n.current,
    createdAt: n.createdAt.toISOString(),
  };
}

export function presentMyNotice(m: MyNotice): z.infer<typeof MyNoticeView> {
  return { ...presentNotice(m.notice), seen: m.seen, seenAt: iso(m.seenAt) };
}
