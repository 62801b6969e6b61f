import type { Types } from 'mongoose';
import type { GroupRecord, GroupRepository } from '../../../src/data/repositories/group.repository.js';
import type { FavouriteRepository } from '../../../src/data/repositories/favourite.repository.js';
import type { CallRecordRepository, CallRecordWrite } from '../../../src/data/repositories/call-record.repository.js';
import type { DeviceRecord, DeviceRepository } from '../../../src/data/repositories/device.repository.js';
import { Types as T } from 'mongoose';
import { holds, same, type Doc, type FakeTenantDb } from './memory-db.js';
import type { PublicPart } from './port.js';

const ids = (v: unknown): Types.ObjectId[] => (Array.isArray(v) ? (v as Types.ObjectId[]) : []);
const ownerOrMember = (g: Doc, userId: Types.ObjectId) => same(g.ownerId, userId) || holds(g.participantIds, userId);

/** The group repository on a fake tenant database (src/data/repositories/group.repository.ts). */
export class FakeGroupRepository implements PublicPart<GroupRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get groups() {
    return this.db.collection('Group');
  }

  private owned(id: Types.ObjectId, ownerId: Types.ObjectId, change: (d: Doc) => void): GroupRecord | null {
    const g = this.groups.byId(id);
    if (!g || !same(g.ownerId, ownerId)) return null;
    return this.groups.read(this.groups.update(g, change).after) as unknown as GroupRecord;
  }

  async create(ownerId: Types.ObjectId, name: string, participantIds: Types.ObjectId[]): Promise<GroupRecord> {
    return this.groups.insert({ ownerId, name, participantIds }) as unknown as GroupRecord;
  }

  async careTeamOf(userId: Types.ObjectId, limitGroups: number): Promise<Types.ObjectId[]> {
    return this.groups
      .find((g) => holds(g.participantIds, userId))
      .slice(0, limitGroups)
      .flatMap((r) => [r.ownerId as Types.ObjectId, ...ids(r.participantIds)]);
  }

  async findVisible(id: Types.ObjectId, userId: Types.ObjectId): Promise<GroupRecord | null> {
    const g = this.groups.byId(id);
    return g && ownerOrMember(g, userId) ? (this.groups.read(g) as unknown as GroupRecord) : null;
  }

  async findVisibleMany(wanted: readonly Types.ObjectId[], userId: Types.ObjectId): Promise<GroupRecord[]> {
    return this.groups.find(
      (g) => wanted.some((id) => same(id, g._id)) && ownerOrMember(g, userId),
    ) as unknown as GroupRecord[];
  }

  async listVisible(userId: Types.ObjectId): Promise<GroupRecord[]> {
    const rows = this.groups.find((g) => ownerOrMember(g, userId)) as unknown as GroupRecord[];
    return rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async rename(id: Types.ObjectId, ownerId: Types.ObjectId, name: string): Promise<GroupRecord | null> {
    return this.owned(id, ownerId, (d) => void (d.name = name));
  }

  async addParticipants(
    id: Types.ObjectId,
    ownerId: Types.ObjectId,
    add: Types.ObjectId[],
  ): Promise<GroupRecord | null> {
    return this.owned(id, ownerId, (d) => {
      const list = ids(d.participantIds);
      for (const x of add) if (!holds(list, x)) list.push(x);
      d.participantIds = list;
    });
  }

  async removeParticipants(
    id: Types.ObjectId,
    ownerId: Types.ObjectId,
    remove: Types.ObjectId[],
  ): Promise<GroupRecord | null> {
    return this.owned(id, ownerId, (d) => {
      d.participantIds = ids(d.participantIds).filter((x) => !holds(remove, x));
    });
  }
}

/** The favourite repository on a fake tenant database (src/data/repositories/favourite.repository.ts). */
export class FakeFavouriteRepository implements PublicPart<FavouriteRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get favourites() {
    return this.db.collection('Favourite');
  }

  async set(userId: Types.ObjectId, contactId: Types.ObjectId, favourite: boolean): Promise<void> {
    const [row] = this.favourites.stored((f) => same(f.userId, userId) && same(f.contactId, contactId));
    if (favourite && !row) this.favourites.insert({ userId, contactId });
    if (!favourite && row) this.favourites.delete(row);
  }

  async contactIds(userId: Types.ObjectId): Promise<Types.ObjectId[]> {
    return this.favourites.find((f) => same(f.userId, userId)).map((f) => f.contactId as Types.ObjectId);
  }

  async among(userId: Types.ObjectId, contactIds: readonly Types.ObjectId[]): Promise<Set<string>> {
    const rows = this.favourites.stored((f) => same(f.userId, userId) && holds(contactIds, f.contactId));
    return new Set(rows.map((r) => String(r.contactId)));
  }
}

/** The call history on a fake tenant database (src/data/repositories/call-record.repository.ts). */
export class FakeCallRecordRepository implements PublicPart<CallRecordRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get calls() {
    return this.db.collection('CallRecord');
  }

  async save(call: CallRecordWrite, epoch: number): Promise<boolean> {
    const set = {
      callerId: new T.ObjectId(call.callerId),
      participantIds: call.participantIds.map((id) => new T.ObjectId(id)),
      status: call.status,
      startedAt: call.startedAt,
      ...(call.answeredAt ? { answeredAt: call.answeredAt } : {}),
      ...(call.endedAt ? { endedAt: call.endedAt } : {}),
      actorEpoch: epoch,
    };
    const row = this.calls.byId(call.callId);
    if (!row) {
      this.calls.insert({ _id: call.callId, ...set });
      return true;
    }
    // A newer epoch owns the record: the upsert's filter misses it and its insert meets the `_id` (fenced).
    if (typeof row.actorEpoch === 'number' && row.actorEpoch > epoch) return false;
    this.calls.update(row, (d) => void Object.assign(d, set));
    return true;
  }

  private member(callId: string, userId: Types.ObjectId): boolean {
    const r = this.calls.byId(callId);
    return !!r && (same(r.callerId, userId) || holds(r.participantIds, userId));
  }

  async isMember(callId: string, userId: Types.ObjectId): Promise<boolean> {
    return this.member(callId, userId);
  }

  async statusOf(callId: string): Promise<CallRecordWrite['status'] | undefined> {
    return this.calls.byId(callId)?.status as CallRecordWrite['status'] | undefined;
  }

  async exists(callId: string): Promise<boolean> {
    return !!this.calls.byId(callId);
  }

  async recentCounterparts(userId: Types.ObjectId, limitCalls: number): Promise<{ id: Types.ObjectId; at: Date }[]> {
    return this.calls
      .find((r) => same(r.callerId, userId) || holds(r.participantIds, userId))
      .sort((a, b) => (b.startedAt as Date).getTime() - (a.startedAt as Date).getTime())
      .slice(0, limitCalls)
      .flatMap((r) =>
        [r.callerId as Types.ObjectId, ...ids(r.participantIds)]
          .filter((p) => p && !p.equals(userId))
          .map((id) => ({ id, at: r.startedAt as Date })),
      );
  }
}

/**
 * Devices (headsets) on a fake tenant database: the look-up rapid connect makes
 * (src/data/repositories/device.repository.ts `findAvailable`), a device of the user's or of nobody's.
 */
export class FakeDeviceRepository implements Pick<DeviceRepository, 'findAvailable'> {
  constructor(private readonly db: FakeTenantDb) {}

  async findAvailable(id: Types.ObjectId, userId: Types.ObjectId): Promise<DeviceRecord | null> {
    const devices = this.db.collection('Device');
    const d = devices.byId(id);
    const owner = d?.ownerUserId;
    if (!d || (owner !== undefined && owner !== null && !same(owner, userId))) return null;
    return devices.read(d) as unknown as DeviceRecord;
  }
}
