import type { Sharp, SharpOptions } from 'sharp';
import { UnrecoverableError } from 'bullmq';
import { imageSize } from 'image-size';
import pLimit, { type LimitFunction } from 'p-limit';
import type { MediaService } from '../../core/media/media.service.js';
import type { ObjectStore } from '../../storage/object-store.js';
import { layout } from '../../storage/layout.js';
import { ThumbnailJobData } from '../../contracts/job-definitions.js';
import { AppError } from '../../kernel/errors.js';
import type { JobHandler } from '../job-handler.js';
import { SourceBuffers } from './source-buffers.js';

export interface ThumbnailDeps {
  store: ObjectStore;
  /** The thumbnail state of MediaFiles and the tenant's limits (services.media). */
  media: Pick<MediaService, 'uploadLimits' | 'readyThumbnails' | 'setThumbnails'>;
  /**
   * The node's render slots, shared by every thumbnail job it runs (decision 1188): the images decoded at
   * once on the node. Without it a job renders its images one after another.
   */
  slots?: LimitFunction;
  /**
   * The node's source buffers (decision 1189), filled again from one image to the next; without, each
   * source read into memory gets a buffer of its own.
   */
  buffers?: SourceBuffers;
  /** Sources up to this size are read into memory; default IN_MEMORY_SOURCE_BYTES. */
  inMemoryBytes?: number;
}

/**
 * Sources up to this size are read into memory, where libvips decodes them with no file work of its own
 * and their dimensions are read from the header (decision 1189); a larger one is decoded from its path
 * where the store has one (decision 1150). The node's render slots each hold at most this much of a source.
 */
export const IN_MEMORY_SOURCE_BYTES = 8 * 1024 * 1024;

export interface ThumbnailResult {
  status: 'ready' | 'skipped';
  width?: number;
  height?: number;
  /** Each content's outcome, in a job of several (decision 1187). */
  thumbnails?: { hash: string; status: 'ready' | 'skipped'; width?: number; height?: number }[];
}

/** Longest side of a thumbnail, in pixels. */
export const THUMBNAIL_SIZE = 320;

type Limits = NonNullable<Awaited<ReturnType<MediaService['uploadLimits']>>>;
type Mark = Parameters<MediaService['setThumbnails']>[1][number];
/** One content's outcome: made or skipped, or refused for good (the reason is the job's failure). */
type Outcome =
  | { hash: string; status: 'ready' | 'skipped'; width?: number; height?: number }
  | { hash: string; status: 'refused'; reason: string };

/**
 * Renders the WebP thumbnails of stored image content and marks every MediaFile of that content ready.
 * A job carries one content or a tenant's burst of them (decision 1187): the tenant's limits are read once
 * per job, the records of every content are marked in one command, and the contents are rendered in the
 * node's render slots (decision 1188): as many at once as the workers' concurrency, shared by every
 * thumbnail job the node runs, so a job left alone at the end of a burst keeps every slot busy while the
 * number of images decoded at once on the node stays the concurrency.
 * Idempotent: the thumbnail key derives from the source hash, and finished work is skipped. sharp
 * refuses images above the tenant's maxImagePixels before decoding them (decompression bombs); that
 * and undecodable content are permanent failures, recorded as `failed` without retries: the job fails
 * naming them after the other contents of the job were made and marked. An unreachable store or
 * database fails the job retryably, after marking what was made.
 */
export function thumbnailHandler(deps: ThumbnailDeps) {
  return async (input: ThumbnailJobData): Promise<ThumbnailResult> => {
    const data = ThumbnailJobData.parse(input);
    const hashes = [data.hash, ...(data.more ?? [])];
    // The reads do not depend on each other. The limits are read for every job: a lowered pixel limit
    // (the decompression-bomb guard) applies at once; each source is then read bounded by them. A
    // content is done when its records say ready and the store still holds its thumbnail: the store is
    // asked only about the contents the records call ready (none, for fresh uploads).
    const [marked, limits] = await Promise.all([
      deps.media.readyThumbnails(data.tenant, hashes),
      deps.media.uploadLimits(data.tenant),
    ]);
    const ready = new Set<string>();
    await Promise.all(
      [...marked].map(async (h) => {
        if (await deps.store.head(layout.thumbnail(data.tenant, h))) ready.add(h);
      }),
    );
    if (ready.size === hashes.length) return settle(hashes.map((hash) => ({ hash, status: 'skipped' })));
    if (!limits) throw new UnrecoverableError(`tenant ${data.tenant} is not provisioned`);
    const marks: Mark[] = [];
    const slots = deps.slots ?? pLimit(1);
    let unreachable: unknown;
    const outcomes = await Promise.all(
      hashes.map((hash): Promise<Outcome | undefined> | Outcome => {
        if (ready.has(hash)) return { hash, status: 'skipped' };
        return slots(() =>
          // After an unreachable store the job's other contents are not tried: the retry makes them.
          unreachable === undefined ? render(deps, data.tenant, hash, limits, marks) : undefined,
        ).catch((e: unknown) => {
          unreachable ??= e;
          return undefined;
        });
      }),
    );
    // What was made stays made when another content met an unreachable store (the retry skips it).
    await deps.media.setThumbnails(data.tenant, marks);
    if (unreachable !== undefined) throw unreachable;
    return settle(outcomes as Outcome[]);
  };
}

/** The job's result, or its permanent failure naming the contents refused. */
function settle(outcomes: Outcome[]): ThumbnailResult {
  const refused = outcomes.filter((o) => o.status === 'refused');
  if (refused.length === 1 && outcomes.length === 1) throw new UnrecoverableError(refused[0]!.reason);
  if (refused.length)
    throw new UnrecoverableError(
      `${refused.length} of ${outcomes.length} images refused: ${refused.map((o) => o.reason).join('; ')}`,
    );
  const done = outcomes as Exclude<Outcome, { status: 'refused' }>[];
  const status = done.some((o) => o.status === 'ready') ? 'ready' : 'skipped';
  if (done.length === 1) {
    const [one] = done;
    return one!.status === 'ready' ? { status, width: one!.width, height: one!.height } : { status };
  }
  return { status, thumbnails: done };
}

/** One content's thumbnail, its mark added to `marks`; a store error other than a refusal is thrown (retried). */
async function render(
  deps: ThumbnailDeps,
  tenant: string,
  hash: string,
  limits: Limits,
  marks: Mark[],
): Promise<Outcome> {
  const source = await readSource(deps, layout.media(tenant, hash), limits.maxBytes);
  if (source === 'too large') return { hash, status: 'refused', reason: 'source exceeds the upload limit' };
  if (!source) {
    marks.push({ hash, update: { status: 'failed' } });
    return { hash, status: 'refused', reason: 'source content is missing' };
  }
  try {
    const image = (await loadSharp())(source, {
      limitInputPixels: limits.maxImagePixels,
      failOn: 'error',
      sequentialRead: true,
    });
    // The original's dimensions: from a source in memory, its header (nothing decoded); else by libvips.
    const meta = (typeof source !== 'string' && headerSize(source)) || (await image.metadata());
    const thumb = await image
      .rotate()
      .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
    const put = await deps.store.put(layout.thumbnail(tenant, hash), thumb, { contentType: 'image/webp' });
    marks.push({
      hash,
      update: { status: 'ready', thumbnailHash: put.sha256, width: meta.width, height: meta.height },
    });
    return { hash, status: 'ready', width: meta.width, height: meta.height };
  } catch (e) {
    if (!isImageError(e)) throw e;
    marks.push({ hash, update: { status: 'failed' } });
    // libvips names a file it read by its path: the reason (shown to administrators) names the content instead.
    const reason = (e as Error).message.replaceAll(typeof source === 'string' ? source : '\0', `media ${hash}`);
    return { hash, status: 'refused', reason: `image refused: ${reason}` };
  } finally {
    // libvips is done with the source (metadata and pipeline have settled): its buffer serves the next image.
    if (typeof source !== 'string') deps.buffers?.give(source);
  }
}

/**
 * A thumbnail's source within the tenant's byte limit: in memory up to the in-memory bound (into the
 * node's source buffers), else its local path (a store of local files) or the whole object (another
 * store); null when absent. Another store error (unreachable) is thrown: retried, not marked failed.
 */
async function readSource(
  deps: ThumbnailDeps,
  key: string,
  maxBytes: number,
): Promise<Buffer | string | null | 'too large'> {
  const { store, buffers } = deps;
  const bound = store.localFile ? Math.min(maxBytes, deps.inMemoryBytes ?? IN_MEMORY_SOURCE_BYTES) : maxBytes;
  const refusal = (e: unknown) => {
    if (e instanceof AppError && e.code === 'file_not_found') return null;
    if (e instanceof AppError && e.code === 'payload_too_large') return 'too large' as const;
    throw e;
  };
  const read = await store.read(key, bound, buffers?.take).catch(refusal);
  if (read !== 'too large' || bound === maxBytes) return read;
  return store.localFile!(key, maxBytes).catch(refusal);
}

/** Formats whose header `image-size` reads as libvips does (the first image, before any EXIF rotation). */
const HEADER_FORMATS = new Set(['jpg', 'png', 'webp']);

/** The width and height in a JPEG, PNG or WebP header; undefined for another format or a header it cannot read. */
function headerSize(source: Buffer): { width: number; height: number } | undefined {
  try {
    const { width, height, type } = imageSize(source);
    return type && HEADER_FORMATS.has(type) && width > 0 && height > 0 ? { width, height } : undefined;
  } catch {
    return undefined;
  }
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
  thumbnailHandler({ store: infra.store, media: services.media, ...renderSlots(infra) })(job.data);

const slotsOfNode = new WeakMap<object, { slots: LimitFunction; buffers: SourceBuffers }>();

/** A node's render slots, as many as a worker runs jobs at once (JOBS_CONCURRENCY), and their source buffers. */
function renderSlots(infra: Parameters<JobHandler<'thumbnail'>>[1]['infra']) {
  let node = slotsOfNode.get(infra);
  if (!node) {
    const n = infra.config.jobs.concurrency;
    node = { slots: pLimit(n), buffers: new SourceBuffers(IN_MEMORY_SOURCE_BYTES, n) };
    slotsOfNode.set(infra, node);
  }
  return node;
}
