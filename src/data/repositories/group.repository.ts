import type { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { GroupDoc } from '../models/group.model.js';

export type { GroupRecord } from '../models/group.model.js';
import type { GroupRecord } from '../models/group.model.js';

/**
 * Contact groups. Writes are guarded by owner so a non-owner's request matches nothing; those that change
 * who is in a group run under `db.careTeamWrite` (decision 1132).
 */
export class GroupRepository {
  constructor(private readonly db: TenantDb) {}

  private get Group() {
    return this.db.models.Group;
  }

  async create(ownerId: Types.ObjectId, name: string, participantIds: Types.ObjectId[]): Promise<GroupRecord> {
    const doc = await this.db.careTeamWrite(() => this.Group.create({ ownerId, name, participantIds }));
    return doc.toObject() as GroupRecord;
  }

  /** Owners and members of the groups the user belongs to. */
  async careTeamOf(userId: Types.ObjectId, limitGroups: number): Promise<Types.ObjectId[]> {
    const rows = await this.Group.find({ participantIds: userId }, { ownerId: 1, participantIds: 1 })
      .limit(limitGroups)
      .lean<{ ownerId: Types.ObjectId; participantIds: Types.ObjectId[] }[]>()
      .exec();
    return rows.flatMap((r) => [r.ownerId, ...r.participantIds]);
  }

  /** A group its owner or one of its participants may read. */
  findVisible(id: Types.ObjectId, userId: Types.ObjectId): Promise<GroupRecord | null> {
    return this.Group.findOne({ _id: id, $or: [{ ownerId: userId }, { participantIds: userId }] })
      .lean<GroupRecord>()
      .exec();
  }

  findVisibleMany(ids: readonly Types.ObjectId[], userId: Types.ObjectId): Promise<GroupRecord[]> {
    return this.Group.find({ _id: { $in: ids }, $or: [{ ownerId: userId }, { participantIds: userId }] })
      .lean<GroupRecord[]>()
      .exec();
  }

  listVisible(userId: Types.ObjectId): Promise<GroupRecord[]> {
    return this.Group.find({ $or: [{ ownerId: userId }, { participantIds: userId }] })
      .sort({ name: 1 })
      .lean<GroupRecord[]>()
      .exec();
  }

  rename(id: Types.ObjectId, ownerId: Types.ObjectId, name: string): Promise<GroupRecord | null> {
    return this.Group.findOneAndUpdate({ _id: id, ownerId }, { $set: { name } }, { returnDocument: 'after' })
      .lean<GroupRecord>()
      .exec();
  }

  addParticipants(id: Types.ObjectId, ownerId: Types.ObjectId, ids: Types.ObjectId[]): Promise<GroupRecord | null> {
    return this.db.careTeamWrite(() =>
      this.Group.findOneAndUpdate(
        { _id: id, ownerId },
        { $addToSet: { participantIds: { $each: ids } } },
        { returnDocument: 'after' },
      )
        .lean<GroupRecord>()
        .exec(),
    );
  }

  removeParticipants(id: Types.ObjectId, ownerId: Types.ObjectId, ids: Types.ObjectId[]): Promise<GroupRecord | null> {
    return this.db.careTeamWrite(() =>
      this.Group.findOneAndUpdate(
        { _id: id, ownerId },
        { $pullAll: { participantIds: ids } },
        { returnDocument: 'after' },
      )
        .lean<GroupRecord>()
        .exec(),
    );
  }
}
