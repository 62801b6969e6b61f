import { refuseControlChars } from '../../kernel/text-input.js';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { AppError, fromZod } from '../../kernel/errors.js';
import { checkExtension, guardedSource, typeOf, uploadFailure, type UploadLimits } from './upload-policy.js';
import type { Principal } from '../../kernel/principal.js';
import type { MediaFileRepository, MediaFileRecord } from '../../data/repositories/media-file.repository.js';
import type { FileShareRepository, FileShareRecord } from '../../data/repositories/file-share.repository.js';
import type { ByteRange, ObjectInfo, ObjectStore } from '../../storage/object-store.js';
import { layout, SHA256_HEX } from '../../storage/layout.js';
import { MEDIA_ADMIN_PERMISSION, type MediaAccess } from './media-access.js';
import { announce, type AnnounceHook } from '../webhooks/webhook-events.js';
import { recordBy, type AuditRecorder } from '../audit/audit-by.js';

/** One part of a multipart UploadContent form, in arrival order; a file part must be consumed before the next. */
export type UploadPart =
  { type: 'field'; name: string; value: string } | { type: 'file'; name: string; fileName: string; stream: Readable };

const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** The text fields of UploadContent. `clientRef` is the mobile client's id of a queued upload. */
export const UploadFields = z.object({
  eventId: z
    .string()
    .regex(/^[a-f0-9]{24}$/i, 'must be an event id')
    .optional(),
  sessionId: z.string().min(1).max(128).optional(),
  clientRef: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only')
    .optional(),
  share: flag.optional(),
  shareExpiresInSeconds: z.coerce
    .number()
    .int()
    .positive()
    .max(90 * 24 * 3600)
    .optional(),
});
export type UploadFields = z.infer<typeof UploadFields>;

export interface UploadResult {
  file: MediaFileRecord;
  share?: FileShareRecord;
  /** False when the client's reference already named a stored upload (a retry). */
  created: boolean;
}

/** An object ready to stream: checked for tenant and permission, opened lazily so 304s read nothing. */
export interface DownloadHandle {
  info: ObjectInfo;
  fileName: string;
  contentType: string;
  open(range?: ByteRange): Promise<Readable>;
}

export interface MediaDeps {
  store: ObjectStore;
  /** Per-tenant repositories (factories of the composition root). */
  files(tenant: string): MediaFileRepository;
  shares(tenant: string): FileShareRepository;
  /**
   * Queues the thumbnail of stored image content (idempotent by tenant and hash) and tells the id of the
   * job that carries it (a burst shares jobs: ThumbnailRequests, decision 1187).
   */
  enqueueThumbnail(job: { tenant: string; hash: string }): Promise<{ id: string }>;
  /** Who may read which content (core/media-access.ts); asked on every read path. */
  access: MediaAccess;
  /** Publishes the outbound events a change stored in its outbox (decision 890). */
  announced?: AnnounceHook;
  /** The tenant's audit trail: uploads, shares and every read of content (docs/audit.md). */
  audit?: AuditRecorder;
}

/**
 * The upload flow of SPEC.md and every way a stored file is read back. Bytes stream from the request
 * through the signature check and the hasher into the store; nothing holds a whole file.
 */
export class MediaService {
  constructor(private readonly deps: MediaDeps) {}

  private repos(tenant: string) {
    return { files: this.deps.files(tenant), shares: this.deps.shares(tenant) };
  }

  /** The tenant's upload limits (null: the tenant is not provisioned); the thumbnail job reads them for every image. */
  uploadLimits(tenant: string): Promise<UploadLimits | null> {
    return this.repos(tenant).files.uploadLimits();
  }

  /** Whether the content `hash` has its thumbnail made (every MediaFile of it is marked ready). */
  thumbnailReady(tenant: string, hash: string): Promise<boolean> {
    return this.repos(tenant).files.thumbnailReady(hash);
  }

  /** Of `hashes`, the contents whose thumbnail is made (a coalesced job's check, one query). */
  readyThumbnails(tenant: string, hashes: readonly string[]): Promise<Set<string>> {
    return this.repos(tenant).files.readyThumbnails(hashes);
  }

  /** Records the thumbnail states of several contents in one command (a coalesced job's marks). */
  setThumbnails(tenant: string, updates: Parameters<MediaFileRepository['setThumbnails']>[0]): Promise<number> {
    return this.repos(tenant).files.setThumbnails(updates);
  }

  /** Queues the thumbnail of stored image content, as an upload does; resolves to the id of the job carrying it. */
  queueThumbnail(tenant: string, hash: string): Promise<{ id: string }> {
    return this.deps.enqueueThumbnail({ tenant, hash });
  }

  /** Records the thumbnail's state on every MediaFile of content `hash`. */
  setThumbnail(
    tenant: string,
    hash: string,
    update: Parameters<MediaFileRepository['setThumbnail']>[1],
  ): Promise<number> {
    return this.repos(tenant).files.setThumbnail(hash, update);
  }

  /**
   * Stores the one file of an UploadContent form and records it. With a `clientRef` (syncFiles) a
   * retry returns the first upload's record and creates nothing; `requireClientRef` makes it mandatory.
   */
  async upload(
    principal: Principal,
    parts: AsyncIterable<UploadPart>,
    opts: { requireClientRef?: boolean } = {},
  ): Promise<UploadResult> {
    const { files, shares } = this.repos(principal.tenant);
    const limits = await files.uploadLimits();
    if (!limits) throw new AppError('tenant_not_found', 'The tenant is not provisioned');
    const raw: Record<string, string> = {};
    let stored: { hash: string; size: number; fileName: string; ext: string } | undefined;
    let retried: MediaFileRecord | null = null;
    for await (const part of parts) {
      if (part.type === 'field') {
        raw[part.name] = part.value;
      } else if (part.name !== 'file' || stored || retried) {
        part.stream.resume();
        throw new AppError('validation_failed', 'Exactly one file part named "file" is expected', {
          errors: [{ field: 'file', message: 'exactly one file' }],
        });
      } else {
        retried = raw.clientRef ? await files.findByClientRef(scopedRef(principal, raw.clientRef)) : null;
        if (retried) part.stream.resume();
        else stored = await this.storeUpload(principal.tenant, part.fileName, part.stream, limits);
      }
    }
    const fields = parseFields(raw, opts.requireClientRef);
    if (retried)
      return { file: retried, created: false, share: (await shares.findForMediaFile(retried.id)) ?? undefined };
    if (!stored)
      throw new AppError('validation_failed', 'file: a file part is required', {
        errors: [{ field: 'file', message: 'required' }],
      });
    if (fields.eventId && !(await files.canAttachToEvent(fields.eventId, principal.userId))) {
      throw new AppError('event_not_found', 'No such event among yours');
    }
    // A file joins a call's record (and is readable by its members) only when its uploader is in the call.
    if (fields.sessionId && !(await files.canAttachToSession(fields.sessionId, principal.userId))) {
      throw new AppError('call_not_found', 'No such call session among yours');
    }
    return this.record(principal, stored, fields);
  }

  private async storeUpload(tenant: string, fileName: string, stream: Readable, limits: UploadLimits) {
    const ext = (() => {
      try {
        return checkExtension(fileName, limits);
      } catch (e) {
        stream.resume();
        throw e;
      }
    })();
    const put = await this.deps.store
      .putContentAddressed(layout.mediaPrefix(tenant), guardedSource(stream, ext), {
        contentType: typeOf(ext).contentType,
        maxBytes: limits.maxBytes,
      })
      .catch((e: unknown) => {
        stream.resume();
        throw uploadFailure(e);
      });
    return { hash: put.sha256, size: put.size, fileName: cleanName(fileName), ext };
  }

  private async record(
    principal: Principal,
    stored: { hash: string; size: number; fileName: string; ext: string },
    fields: UploadFields,
  ): Promise<UploadResult> {
    const { files, shares } = this.repos(principal.tenant);
    const { contentType, kind } = typeOf(stored.ext);
    const outcome = kind === 'image' ? await files.thumbnailOutcome(stored.hash) : undefined;
    const { record, created } = await files.createOnce({
      hash: stored.hash,
      size: stored.size,
      contentType,
      fileName: stored.fileName,
      extension: stored.ext,
      ownerId: principal.userId,
      eventId: fields.eventId,
      sessionId: fields.sessionId,
      clientRef: fields.clientRef ? scopedRef(principal, fields.clientRef) : `upload:${randomUUID()}`,
      kind,
      thumbnailStatus: kind !== 'image' ? 'none' : (outcome ?? 'pending'),
      outbox: (mediaFileId) => [
        announce('media.uploaded', fields.eventId, {
          mediaFileId,
          hash: stored.hash,
          kind,
          contentType,
          size: stored.size,
          ownerId: principal.userId,
        }),
      ],
    });
    if (created) await this.deps.announced?.(principal.tenant);
    const facts = { mediaFileId: record.id, hash: stored.hash, kind, contentType, size: stored.size };
    if (created)
      await recordBy(this.deps.audit, principal, 'media.upload', { eventId: fields.eventId, details: facts });
    if (created && kind === 'image' && !outcome) await this.queueThumbnail(principal.tenant, stored.hash);
    let share = created ? undefined : ((await shares.findForMediaFile(record.id)) ?? undefined);
    if (created && fields.share) {
      const expiresAt = fields.shareExpiresInSeconds
        ? new Date(Date.now() + fields.shareExpiresInSeconds * 1000)
        : undefined;
      share = await shares.create({
        mediaFileId: record.id,
        path: randomBytes(18).toString('base64url'),
        createdBy: principal.userId,
        expiresAt,
      });
      // The share's path is the capability itself: it stays out of the trail.
      await recordBy(this.deps.audit, principal, 'media.share', {
        eventId: fields.eventId,
        details: { mediaFileId: record.id, hash: stored.hash, via: 'link', ...(expiresAt ? { expiresAt } : {}) },
      });
    }
    return { file: record, share, created };
  }

  /** GET /api/media/download/{tenant}/{hash}: the path tenant must be the caller's. */
  async download(principal: Principal, tenant: string, hash: string): Promise<DownloadHandle> {
    assertSameTenant(principal, tenant);
    if (!SHA256_HEX.test(hash)) throw new AppError('file_not_found');
    const file = await this.repos(tenant).files.findByHash(hash);
    if (!file) throw new AppError('file_not_found');
    await this.deps.access.assertCanRead(principal, hash);
    const handle = await this.handle(layout.media(tenant, hash), file.fileName, file.contentType);
    await this.readBy(principal, 'media.download', file, { via: 'download' });
    return handle;
  }

  /** One audit entry per read of stored content, once the read is allowed and the object exists. */
  private async readBy(
    principal: Principal,
    action: 'media.download' | 'media.thumbnail' | 'recording.download',
    file: { id: string; hash: string; eventId?: unknown } | undefined,
    details: Record<string, unknown>,
  ): Promise<void> {
    await recordBy(this.deps.audit, principal, action, {
      eventId: file?.eventId ? String(file.eventId) : undefined,
      details: { ...(file?.id ? { mediaFileId: file.id } : {}), ...(file ? { hash: file.hash } : {}), ...details },
    });
  }

  /** The thumbnail of image content, once the thumbnail job has produced it. */
  async thumbnail(principal: Principal, tenant: string, hash: string): Promise<DownloadHandle> {
    assertSameTenant(principal, tenant);
    if (!SHA256_HEX.test(hash)) throw new AppError('file_not_found');
    const file = await this.repos(tenant).files.findByHash(hash);
    if (!file || file.kind !== 'image') throw new AppError('file_not_found');
    await this.deps.access.assertCanRead(principal, hash);
    if (file.thumbnailStatus !== 'ready') {
      throw new AppError(
        'thumbnail_not_ready',
        `The thumbnail is ${file.thumbnailStatus}`,
        file.thumbnailStatus === 'pending' ? { retryAfter: 2 } : {},
      );
    }
    const handle = await this.handle(layout.thumbnail(tenant, hash), `${stripExt(file.fileName)}.webp`, 'image/webp');
    await this.readBy(principal, 'media.thumbnail', file, { via: 'thumbnail' });
    return handle;
  }

  /** GET /api/files/shared/{filePath}: a FileShare path of the caller's tenant, unexpired. */
  async shared(principal: Principal, filePath: string): Promise<DownloadHandle> {
    const { files, shares } = this.repos(principal.tenant);
    const share = /^[A-Za-z0-9_-]{8,64}$/.test(filePath) ? await shares.findByPath(filePath) : null;
    if (!share || (share.expiresAt && share.expiresAt.getTime() <= Date.now())) throw new AppError('file_not_found');
    const file = await files.findById(share.mediaFileId.toString());
    if (!file) throw new AppError('file_not_found');
    const handle = await this.handle(layout.media(principal.tenant, file.hash), file.fileName, file.contentType);
    await this.readBy(principal, 'media.download', file, { via: 'share' });
    return handle;
  }

  /**
   * GET /files/{tenantId}/{container}/{*path}: a file inside one of the tenant's readable containers.
   * Content (`media/{hash}`, `thumbnails/{hash}.webp`) follows the media access rule; `recordings`
   * are for administrators; `assets` (logos and the like) for any reader of the tenant.
   */
  async containerFile(
    principal: Principal,
    tenant: string,
    container: string,
    segments: readonly string[],
  ): Promise<DownloadHandle> {
    assertSameTenant(principal, tenant);
    const key = layout.containerFile(tenant, container, segments.join('/'));
    await this.assertContainerReadable(principal, container, segments);
    const info = await this.deps.store.head(key);
    if (!info) throw new AppError('file_not_found');
    const handle = await this.handle(
      key,
      segments[segments.length - 1] ?? 'file',
      info.contentType ?? 'application/octet-stream',
      info,
    );
    await this.containerRead(principal, tenant, container, segments);
    return handle;
  }

  /** Content, thumbnails and recordings read through their container path are audited like the direct reads. */
  private async containerRead(principal: Principal, tenant: string, container: string, segments: readonly string[]) {
    if (container === 'recordings')
      return this.readBy(principal, 'recording.download', undefined, { via: 'container', path: segments.join('/') });
    if (container !== 'media' && container !== 'thumbnails') return;
    const hash = segments[0]!.replace(/\.webp$/, '');
    const file = (await this.repos(tenant).files.findByHash(hash)) ?? undefined;
    const action = container === 'media' ? 'media.download' : 'media.thumbnail';
    await this.readBy(principal, action, file ?? { id: '', hash }, { via: 'container' });
  }

  private async assertContainerReadable(
    principal: Principal,
    container: string,
    segments: readonly string[],
  ): Promise<void> {
    if (container === 'assets') return;
    if (container === 'recordings') {
      if (!principal.permissions.has(MEDIA_ADMIN_PERMISSION)) throw new AppError('file_not_found');
      return;
    }
    const name = segments.length === 1 ? segments[0]! : '';
    const hash = container === 'thumbnails' ? name.replace(/\.webp$/, '') : name;
    if (!SHA256_HEX.test(hash)) throw new AppError('file_not_found');
    await this.deps.access.assertCanRead(principal, hash);
  }

  private async handle(
    key: string,
    fileName: string,
    contentType: string,
    known?: ObjectInfo,
  ): Promise<DownloadHandle> {
    const info = known ?? (await this.deps.store.head(key));
    if (!info) throw new AppError('file_not_found');
    return { info, fileName, contentType, open: async (range) => (await this.deps.store.get(key, range)).body };
  }
}

function parseFields(raw: Record<string, string>, requireClientRef = false): UploadFields {
  refuseControlChars(raw);
  const r = UploadFields.safeParse(raw);
  if (!r.success) throw fromZod(r.error);
  if (requireClientRef && !r.data.clientRef)
    throw new AppError('validation_failed', 'clientRef: required for syncFiles', {
      errors: [{ field: 'clientRef', message: 'required' }],
    });
  return r.data;
}

/** Client references are the caller's own namespace: two users' "photo-1" never collide. */
function scopedRef(principal: Principal, clientRef: string): string {
  return `sync:${principal.userId}:${clientRef}`;
}

function assertSameTenant(principal: Principal, tenant: string): void {
  if (tenant !== principal.tenant) throw new AppError('wrong_tenant', 'The path names another tenant');
}

/** Keeps the last path segment and drops control characters: the name is only ever shown back. */
function cleanName(fileName: string): string {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  // eslint-disable-next-line no-control-regex
  return base.replace(/[\x00-\x1f\x7f"]/g, '').slice(0, 255) || 'file';
}

function stripExt(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}
