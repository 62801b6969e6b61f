import { Types, type HydratedDocument } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { MediaFileDoc } from '../models/media-file.model.js';
import type { OutboxEntry } from '../outbox.js';

/** What a tenant allows (TenantConfig.uploads); tenant admins change it, the server enforces it (src/core/media/upload-policy.ts). */
export interface UploadLimits {
  maxBytes: number;
  allowedExtensions: readonly string[];
  maxImagePixels: number;
}

export type MediaFileRecord = HydratedDocument<MediaFileDoc>;

export interface NewMediaFile {
  hash: string;
  size: number;
  contentType: string;
  fileName: string;
  extension: string;
  ownerId: string;
  eventId?: string;
  sessionId?: string;
  clientRef: string;
  kind: MediaFileDoc['kind'];
  thumbnailStatus: MediaFileDoc['thumbnailStatus'];
  /** Outbound events announcing the new file, stored with it (decision 890); a retried upload adds none. */
  outbox?: (mediaFileId: string) => OutboxEntry[];
}

/** MediaFile records of one tenant, plus the two facts uploads need from elsewhere (limits, event access). */
export class MediaFileRepository {
  constructor(private readonly db: TenantDb) {}

  /** The tenant's upload configuration (TenantConfig.uploads), or null before the tenant is migrated. */
  async uploadLimits(): Promise<UploadLimits | null> {
    // Read for every thumbnail job: straight through the driver (a point read by _id, nothing to cast).
    const s = await this.db.models.TenantConfig.collection.findOne<{ uploads?: UploadLimits }>(
      { _id: 'tenant' as never },
      { projection: { uploads: 1 } },
    );
    return s?.uploads
      ? {
          maxBytes: s.uploads.maxBytes,
          allowedExtensions: s.uploads.allowedExtensions,
          maxImagePixels: s.uploads.maxImagePixels,
        }
      : null;
  }

  /** True when the event exists and the user organises it or takes part in it. */
  async canAttachToEvent(eventId: string, userId: string): Promise<boolean> {
    if (!Types.ObjectId.isValid(eventId) || !Types.ObjectId.isValid(userId)) return false;
    const uid = new Types.ObjectId(userId);
    const hit = await this.db.models.Event.exists({
      _id: new Types.ObjectId(eventId),
      $or: [{ organizerId: uid }, { participantIds: uid }],
    });
    return Boolean(hit);
  }

  /** True when the call session exists and the user placed it or takes part in it. */
  async canAttachToSession(sessionId: string, userId: string): Promise<boolean> {
    if (!Types.ObjectId.isValid(userId)) return false;
    const uid = new Types.ObjectId(userId);
    return Boolean(
      await this.db.models.CallRecord.exists({ _id: sessionId, $or: [{ callerId: uid }, { participantIds: uid }] }),
    );
  }

  /**
   * Whether `userId` may read the content `hash` (the facts behind core/media-access.ts): they own a
   * record of it, or are organizer, participant or attached device of the event a record belongs to or
   * of an event it is attached to or shared to (MediaGrant), or caller or participant of the call
   * (sessionId) a record belongs to.
   * Records written by older code without eventId/sessionId simply grant nothing beyond ownership.
   */
  async readableBy(hash: string, userId: string): Promise<boolean> {
    if (!Types.ObjectId.isValid(userId)) return false;
    const uid = new Types.ObjectId(userId);
    const records = await this.db.models.MediaFile.find({ hash }, { ownerId: 1, eventId: 1, sessionId: 1 })
      .limit(500)
      .lean<{ ownerId?: Types.ObjectId | null; eventId?: Types.ObjectId | null; sessionId?: string | null }[]>()
      .exec();
    if (records.some((r) => r.ownerId && uid.equals(r.ownerId))) return true;
    const grants = await this.db.models.MediaGrant.find({ hash }, { eventId: 1 })
      .limit(500)
      .lean<{ eventId: Types.ObjectId }[]>()
      .exec();
    const eventIds = [...records.flatMap((r) => (r.eventId ? [r.eventId] : [])), ...grants.map((g) => g.eventId)];
    const member = { $or: [{ organizerId: uid }, { participantIds: uid }, { deviceIds: uid }] };
    const inEvent = await this.db.models.Event.exists({
      $and: [{ $or: [{ _id: { $in: eventIds } }, { 'attachments.hash': hash }] }, member],
    });
    if (inEvent) return true;
    const sessionIds = [...new Set(records.flatMap((r) => (typeof r.sessionId === 'string' ? [r.sessionId] : [])))];
    if (!sessionIds.length) return false;
    return Boolean(
      await this.db.models.CallRecord.exists({
        _id: { $in: sessionIds },
        $or: [{ callerId: uid }, { participantIds: uid }],
      }),
    );
  }

  /** True when the event exists and the user organises it, takes part in it or is a device attached to it. */
  async isEventMember(eventId: string, userId: string): Promise<boolean> {
    if (!Types.ObjectId.isValid(eventId) || !Types.ObjectId.isValid(userId)) return false;
    const uid = new Types.ObjectId(userId);
    return Boolean(
      await this.db.models.Event.exists({
        _id: new Types.ObjectId(eventId),
        $or: [{ organizerId: uid }, { participantIds: uid }, { deviceIds: uid }],
      }),
    );
  }

  /** Grants the members of an event read access to the content `hash` (idempotent). */
  async grantToEvent(hash: string, eventId: string, grantedBy: string): Promise<void> {
    const e = new Types.ObjectId(eventId);
    await this.db.models.MediaGrant.updateOne(
      { hash, eventId: e },
      { $setOnInsert: { hash, eventId: e, grantedBy: new Types.ObjectId(grantedBy) } },
      { upsert: true },
    ).exec();
  }

  /**
   * One page of an event's files (decision 940): uploaded with its id (recordings included) or attached
   * to it, newest first with `_id` breaking ties, and how many there are.
   */
  async pageForEvent(
    eventId: Types.ObjectId,
    attachmentIds: readonly Types.ObjectId[],
    page: { skip: number; take: number },
  ): Promise<{ items: MediaFileRecord[]; total: number }> {
    const filter = attachmentIds.length ? { $or: [{ eventId }, { _id: { $in: attachmentIds } }] } : { eventId };
    return this.pageOf(filter, page);
  }

  /** One page of a call session's files, optionally only those `ownerId` uploaded (decision 940). */
  async pageForSession(
    sessionId: string,
    page: { skip: number; take: number },
    ownerId?: Types.ObjectId,
  ): Promise<{ items: MediaFileRecord[]; total: number }> {
    return this.pageOf({ sessionId, ...(ownerId ? { ownerId } : {}) }, page);
  }

  private async pageOf(
    filter: Record<string, unknown>,
    page: { skip: number; take: number },
  ): Promise<{ items: MediaFileRecord[]; total: number }> {
    const [items, total] = await Promise.all([
      this.db.models.MediaFile.find(filter, { outbox: 0 })
        .sort({ createdAt: -1, _id: -1 })
        .skip(page.skip)
        .limit(page.take)
        .exec(),
      this.db.models.MediaFile.countDocuments(filter).exec(),
    ]);
    return { items, total };
  }

  findByClientRef(clientRef: string): Promise<MediaFileRecord | null> {
    return this.db.models.MediaFile.findOne({ clientRef });
  }

  findByHash(hash: string): Promise<MediaFileRecord | null> {
    return this.db.models.MediaFile.findOne({ hash }).sort({ createdAt: -1 });
  }

  findById(id: string): Promise<MediaFileRecord | null> {
    if (!Types.ObjectId.isValid(id)) return Promise.resolve(null);
    return this.db.models.MediaFile.findById(id);
  }

  /**
   * Inserts the record, or returns the one already holding `clientRef` (a retried upload). The unique
   * index on clientRef settles concurrent retries: the loser reads the winner's record.
   */
  async createOnce(input: NewMediaFile): Promise<{ record: MediaFileRecord; created: boolean }> {
    const existing = await this.findByClientRef(input.clientRef);
    if (existing) return { record: existing, created: false };
    try {
      const { outbox, ...fields } = input;
      const _id = new Types.ObjectId();
      const record = await this.db.models.MediaFile.create({
        _id,
        ...fields,
        ownerId: new Types.ObjectId(input.ownerId),
        eventId: input.eventId ? new Types.ObjectId(input.eventId) : undefined,
        ...(outbox ? { outbox: outbox(_id.toHexString()) } : {}),
      });
      return { record, created: true };
    } catch (e) {
      if ((e as { code?: number }).code !== 11000) throw e;
      const winner = await this.findByClientRef(input.clientRef);
      if (!winner) throw e;
      return { record: winner, created: false };
    }
  }

  /** Records the thumbnail outcome on every record sharing the content (content is stored once). */
  async setThumbnail(
    hash: string,
    update: { status: 'ready' | 'failed' | 'pending'; thumbnailHash?: string; width?: number; height?: number },
  ): Promise<number> {
    // Once per thumbnail job: straight through the driver (plain values, nothing to cast).
    const r = await this.db.models.MediaFile.collection.updateMany(
      { hash },
      { $set: { ...thumbnailFields(update), updatedAt: new Date() } },
    );
    return r.matchedCount;
  }

  /**
   * Records the thumbnail states of several contents in one command (a coalesced thumbnail job, decision
   * 1187): each content's records updated as setThumbnail would, unordered. Returns the records matched.
   */
  async setThumbnails(
    updates: readonly { hash: string; update: Parameters<MediaFileRepository['setThumbnail']>[1] }[],
  ): Promise<number> {
    if (!updates.length) return 0;
    const now = new Date();
    const r = await this.db.models.MediaFile.collection.bulkWrite(
      updates.map(({ hash, update }) => ({
        updateMany: { filter: { hash }, update: { $set: { ...thumbnailFields(update), updatedAt: now } } },
      })),
      { ordered: false },
    );
    return r.matchedCount;
  }

  /** Of `hashes`, the contents whose thumbnail is made (the coalesced job's idempotency check, one query). */
  async readyThumbnails(hashes: readonly string[]): Promise<Set<string>> {
    if (!hashes.length) return new Set();
    const hits = await this.db.models.MediaFile.collection
      .find<{ hash: string }>(
        { hash: { $in: [...hashes] }, thumbnailStatus: 'ready' },
        { projection: { hash: 1, _id: 0 } },
      )
      .toArray();
    return new Set(hits.map((h) => h.hash));
  }

  /** The settled thumbnail outcome of this content, if any record has one (content is stored once). */
  async thumbnailOutcome(hash: string): Promise<'ready' | 'failed' | undefined> {
    const hit = await this.db.models.MediaFile.findOne(
      { hash, thumbnailStatus: { $in: ['ready', 'failed'] } },
      { thumbnailStatus: 1, thumbnailHash: 1, width: 1, height: 1 },
    ).lean();
    return hit?.thumbnailStatus === 'ready' || hit?.thumbnailStatus === 'failed' ? hit.thumbnailStatus : undefined;
  }

  /** Whether a thumbnail for this content already exists (the job's idempotency check). */
  async thumbnailReady(hash: string): Promise<boolean> {
    return Boolean(await this.db.models.MediaFile.exists({ hash, thumbnailStatus: 'ready' }));
  }
}

/** The fields a thumbnail outcome sets on a content's records. */
function thumbnailFields(update: Parameters<MediaFileRepository['setThumbnail']>[1]): Record<string, unknown> {
  const $set: Record<string, unknown> = { thumbnailStatus: update.status };
  if (update.thumbnailHash) $set.thumbnailHash = update.thumbnailHash;
  if (update.width) $set.width = update.width;
  if (update.height) $set.height = update.height;
  return $set;
}
