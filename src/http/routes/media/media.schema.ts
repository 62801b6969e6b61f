import { z } from 'zod';
import type { UploadResult } from '../../../core/media.service.js';

export { UploadFields } from '../../../core/media.service.js';

const TenantParam = z.string().min(1).max(63);

export const DownloadParams = z.object({ tenant: TenantParam, hash: z.string().min(1).max(128) });
export const DownloadQuery = z.object({
  forceDownload: z.enum(['true', 'false', '1', '0', '']).optional().transform((v) => v === 'true' || v === '1'),
});

/** CallResult: the envelope upload-style operations answer with (SPEC names it, the project shapes it). */
export interface CallResult<T> {
  success: boolean;
  message?: string;
  data?: T;
}

/** What a client learns about a stored upload; URLs are relative to the tenant host. */
export function presentUpload(tenant: string, r: UploadResult): CallResult<Record<string, unknown>> {
  const f = r.file;
  return {
    success: true,
    message: r.created ? 'stored' : 'already stored',
    data: {
      id: f.id,
      hash: f.hash,
      fileName: f.fileName,
      size: f.size,
      contentType: f.contentType,
      kind: f.kind,
      eventId: f.eventId?.toString(),
      sessionId: f.sessionId ?? undefined,
      clientRef: f.clientRef.startsWith('sync:') ? f.clientRef.split(':').slice(2).join(':') : undefined,
      url: `/api/media/download/${tenant}/${f.hash}`,
      thumbnailStatus: f.thumbnailStatus,
      thumbnailUrl: f.kind === 'image' ? `/api/media/thumbnail/${tenant}/${f.hash}` : undefined,
      share: r.share ? { path: r.share.path, url: `/api/files/shared/${r.share.path}`, expiresAt: r.share.expiresAt?.toISOString() } : undefined,
      duplicate: !r.created,
      createdAt: f.get('createdAt')?.toISOString?.(),
    },
  };
}
