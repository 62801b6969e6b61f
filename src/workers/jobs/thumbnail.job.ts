import type { Sharp, SharpOptions } from 'sharp';
import { UnrecoverableError } from 'bullmq';
import type { MediaService } from '../../core/media/media.service.js';
import type { ObjectStore } from '../../storage/object-store.js';
import { layout } from '../../storage/layout.js';
import { ThumbnailJobData } from '../../contracts/job-definitions.js';
import { AppError } from '../../kernel/errors.js';
import type { JobHandler } from '../job-handler.js';

export interface ThumbnailDeps {
  store: ObjectStore;
  /** The thumbnail state of MediaFiles and the tenant's limits (services.media). */
  media: Pick<MediaService, 'uploadLimits' | 'thumbnailReady' | 'setThumbnail'>;
}

export interface ThumbnailResult {
  status: 'ready' | 'skipped';
  width?: number;
  height?: number;
}

/** Longest side of a thumbnail, in pixels. */
export const THUMBNAIL_SIZE = 320;

/**
 * Renders the WebP thumbnail of stored image content and marks every MediaFile of that content ready.
 * Idempotent: the thumbnail key derives from the source hash, and finished work is skipped. sharp
 * refuses images above the tenant's maxImagePixels before decoding them (decompression bombs); that
 * and undecodable content are permanent failures, recorded as `failed` without retries.
 */
export function thumbnailHandler(deps: ThumbnailDeps) {
  return async (input: ThumbnailJobData): Promise<ThumbnailResult> => {
    const data = ThumbnailJobData.parse(input);
    const files = {
      uploadLimits: () => deps.media.uploadLimits(data.tenant),
      thumbnailReady: (hash: string) => deps.media.thumbnailReady(data.tenant, hash),
      setThumbnail: (hash: string, update: Parameters<MediaService['setThumbnail']>[2]) =>
        deps.media.setThumbnail(data.tenant, hash, update),
    };
    const thumbKey = layout.thumbnail(data.tenant, data.hash);
    // The two reads do not depend on each other. The limits are read for every job: a lowered pixel
    // limit (the decompression-bomb guard) applies at once; the source is then read bounded by them.
    const [existing, limits] = await Promise.all([deps.store.head(thumbKey), files.uploadLimits()]);
    if (existing && (await files.thumbnailReady(data.hash))) return { status: 'skipped' };
    if (!limits) throw new UnrecoverableError(`tenant ${data.tenant} is not provisioned`);
    // A local file is decoded from its path by libvips (no copy of the source in this process's memory);
    // another store's object is read whole, bounded by the limit.
    const sourceKey = layout.media(data.tenant, data.hash);
    const reading: Promise<Buffer | string> = deps.store.localFile
      ? deps.store.localFile(sourceKey, limits.maxBytes)
      : deps.store.read(sourceKey, limits.maxBytes);
    const source = await reading.catch((e: unknown) => {
      if (e instanceof AppError && e.code === 'file_not_found') return null;
      if (e instanceof AppError && e.code === 'payload_too_large')
        throw new UnrecoverableError('source exceeds the upload limit');
      throw e; // the store is unreachable: retried, not marked failed
    });
    if (!source) {
      await files.setThumbnail(data.hash, { status: 'failed' });
      throw new UnrecoverableError('source content is missing');
    }
    try {
      const image = (await loadSharp())(source, {
        limitInputPixels: limits.maxImagePixels,
        failOn: 'error',
        sequentialRead: true,
      });
      const meta = await image.metadata();
      const thumb = await image
        .rotate()
        .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 80 })
        .toBuffer();
      const put = await deps.store.put(thumbKey, thumb, { contentType: 'image/webp' });
      await files.setThumbnail(data.hash, {
        status: 'ready',
        thumbnailHash: put.sha256,
        width: meta.width,
        height: meta.height,
      });
      return { status: 'ready', width: meta.width, height: meta.height };
    } catch (e) {
      if (e instanceof UnrecoverableError || !isImageError(e)) throw e;
      await files.setThumbnail(data.hash, { status: 'failed' });
      // libvips names a file it read by its path: the reason (shown to administrators) names the content instead.
      const reason = (e as Error).message.replaceAll(typeof source === 'string' ? source : '\0', `media ${data.hash}`);
      throw new UnrecoverableError(`image refused: ${reason}`);
    }
  };
}

let sharpModule: Promise<(input: Buffer | string, options: SharpOptions) => Sharp> | undefined;

/**
 * sharp (libvips, about 28 MiB resident) is loaded by the first thumbnail, not when the worker role
 * checks its job handlers, so a node that never makes a thumbnail (an import worker) does not carry it.
 */
function loadSharp(): Promise<(input: Buffer | string, options: SharpOptions) => Sharp> {
  sharpModule ??= import('sharp').then((m) => m.default);
  return sharpModule;
}

function isImageError(e: unknown): boolean {
  const m = (e as Error)?.message ?? '';
  return /pixel limit|unsupported image format|Input buffer|VipsJpeg|vips|corrupt|premature end/i.test(m);
}

/** The registered handler: the thumbnail work on this node's object store and databases. */
export const thumbnailJob: JobHandler<'thumbnail'> = (job, { infra, services }) =>
  thumbnailHandler({ store: infra.store, media: services.media })(job.data);
