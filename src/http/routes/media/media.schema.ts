import { z } from 'zod';
import type { UploadResult } from '../../../core/media/media.service.js';

export { UploadFields } from '../../../core/media/media.service.js';

const TenantParam = z.string().min(1).max(63);

export const DownloadParams = z.object({ tenant: TenantParam, hash: z.string().min(1).max(128) });
export const DownloadQuery = z.object({
  forceDownload: z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .transform((v) => v === 'true' || v === '1'),
});

/** The stored upload a client learns about (data of the upload CallResult); URLs are relative to the tenant host. */
export const UploadedFile = z.object({
  id: z.string(),
  hash: z.string(),
  fileName: z.string(),
  size: z.number().int(),
  contentType: z.string(),
  kind: z.string(),
  eventId: z.string().optional(),
  sessionId: z.string().optional(),
  clientRef: z.string().optional(),
  url: z.string(),
  thumbnailStatus: z.string().optional(),
  thumbnailUrl: z.string().optional(),
  share: z.object({ path: z.string(), url: z.string(), expiresAt: z.string().optional() }).optional(),
  duplicate: z.boolean(),
  createdAt: z.string().optional(),
});
/** CallResult of an upload. */
export const UploadResponse = z.object({ success: z.boolean(), message: z.string().optional(), data: UploadedFile });

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
      share: r.share
        ? { path: r.share.path, url: `/api/files/shared/${r.share.path}`, expiresAt: r.share.expiresAt?.toISOString() }
        : undefined,
      duplicate: !r.created,
      createdAt: f.get('createdAt')?.toISOString?.(),
    },
  };
}
