import type { Principal } from '../../kernel/principal.js';
import { type MediaFileRepository } from '../../data/repositories/media-file.repository.js';
import { AppError } from '../../kernel/errors.js';
import { recordBy, type AuditRecorder } from '../audit/audit-by.js';

/** The administrator permission that reads any media of the tenant (decision 112). */
export const MEDIA_ADMIN_PERMISSION = 'tenant:admin';

/**
 * The one rule for reading stored content inside a tenant, asked by every path that serves bytes or
 * hands out hashes (downloads, thumbnails, /files, event attachments, shareImage by hash): the caller
 * owns a record of the content, is a member of the event or call session a record belongs to, of an
 * event it is attached to or of an event it was shared to (shareImage), or holds the administrator permission. `media:read` alone is not enough.
 * Shares (`/api/files/shared/{path}`) are the other way in: the share path is the grant.
 */
export class MediaAccess {
  constructor(
    private readonly deps: {
      files(tenant: string): MediaFileRepository;
      /** The tenant's audit trail: a share into an event is recorded (docs/audit.md). */
      audit?: AuditRecorder;
    },
  ) {}

  async canRead(principal: Principal, hash: string): Promise<boolean> {
    if (principal.permissions.has(MEDIA_ADMIN_PERMISSION)) return true;
    return this.deps.files(principal.tenant).readableBy(hash, principal.userId);
  }

  /**
   * Sharing content into an event (hub shareImage by hash) grants the event's members, its attached
   * headsets included, read access to it. Only a member who may read the content can grant: anyone
   * else gets `file_not_found` (unreadable) or `forbidden` (not a member), and nothing is written.
   */
  async shareToEvent(principal: Principal, eventId: string, hash: string): Promise<void> {
    await this.assertCanRead(principal, hash);
    const repo = this.deps.files(principal.tenant);
    if (!(await repo.isEventMember(eventId, principal.userId)))
      throw new AppError('forbidden', 'Only a member of the event shares content into it');
    await repo.grantToEvent(hash, eventId, principal.userId);
    await recordBy(this.deps.audit, principal, 'media.share', { eventId, details: { hash, via: 'event' } });
  }

  /** Refuses unreadable content as if it did not exist (no oracle for other people's hashes). */
  async assertCanRead(principal: Principal, hash: string): Promise<void> {
    if (!(await this.canRead(principal, hash))) throw new AppError('file_not_found');
  }
}
