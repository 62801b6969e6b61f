import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { AppError } from '../../../kernel/errors.js';
import type { DownloadHandle } from '../../../core/media/media.service.js';
import { etagMatches, resolveRange } from './range.js';

/** Types a browser may render inline; anything else is always an attachment. */
const INLINE = /^(image\/(jpeg|png|gif|webp)|application\/pdf|video\/|audio\/)/;

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 name. */
export function contentDisposition(kind: 'inline' | 'attachment', fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/**
 * Sends a stored object with the HTTP semantics downloads need: a strong ETag and 304 on
 * If-None-Match, single byte ranges (206, 416 with the size), If-Range, and headers that stop a
 * browser from sniffing or running what it receives.
 */
export async function sendDownload(
  req: Request,
  res: Response,
  h: DownloadHandle,
  forceDownload = false,
): Promise<void> {
  const etag = `"${h.info.etag}"`;
  res.setHeader('ETag', etag);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Cache-Control', 'private, max-age=86400');
  if (h.info.lastModified) res.setHeader('Last-Modified', h.info.lastModified.toUTCString());
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  if (etagMatches(req.get('if-none-match'), h.info.etag)) {
    res.status(304).end();
    return;
  }
  const ifRange = req.get('if-range');
  const range = ifRange && ifRange !== etag ? undefined : resolveRange(req.get('range'), h.info.size);
  if (range === 'unsatisfiable') {
    res.setHeader('Content-Range', `bytes */${h.info.size}`);
    throw new AppError('range_not_satisfiable', `The file has ${h.info.size} bytes`);
  }
  res.setHeader('Content-Type', h.contentType);
  res.setHeader(
    'Content-Disposition',
    contentDisposition(forceDownload || !INLINE.test(h.contentType) ? 'attachment' : 'inline', h.fileName),
  );
  if (range) {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${h.info.size}`);
  }
  res.setHeader('Content-Length', String(range ? range.end - range.start + 1 : h.info.size));
  const body = await h.open(range);
  await pipeline(body, res).catch((e: { code?: string }) => {
    if (e?.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw e;
  });
}
