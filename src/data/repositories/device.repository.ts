import type { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { DeviceDoc } from '../models/device.model.js';

export type DeviceRecord = DeviceDoc & { _id: Types.ObjectId; createdAt?: Date; updatedAt?: Date };

/** Physical devices mapped to peripheral types. */
export class DeviceRepository {
  constructor(private readonly db: TenantDb) {}

  /**
   * Maps a fingerprint to its device, creating it on first sight. Upsert on the unique fingerprint,
   * so concurrent first calls for the same physical ids converge on one document.
   */
  async upsertByFingerprint(d: {
    typeId: Types.ObjectId;
    physicalIds: string[];
    fingerprint: string;
    deviceKeyHash: string;
    name: string;
    ownerUserId?: Types.ObjectId;
  }): Promise<DeviceRecord> {
    const D = this.db.models.Device;
    try {
      await D.updateOne(
        { fingerprint: d.fingerprint },
        { $setOnInsert: { ...d, status: 'offline', info: {} } },
        { upsert: true },
      ).exec();
    } catch (e) {
      if ((e as { code?: number }).code !== 11000) throw e;
    }
    return (await D.findOne({ fingerprint: d.fingerprint }).lean<DeviceRecord>().exec())!;
  }

  /**
   * The device an id names: the device whose id it is, else the first device (oldest) that lists it among
   * its hardware ids; the same hardware mapped for a second peripheral type keeps naming the first.
   */
  async findByAnyId(id: string): Promise<Pick<DeviceRecord, '_id'> | null> {
    const D = this.db.models.Device;
    if (/^[0-9a-f]{24}$/i.test(id)) {
      const own = await D.findById(id, { _id: 1 }).lean<Pick<DeviceRecord, '_id'>>().exec();
      if (own) return own;
    }
    return D.findOne({ physicalIds: id }, { _id: 1 })
      .sort({ createdAt: 1, _id: 1 })
      .lean<Pick<DeviceRecord, '_id'>>()
      .exec();
  }

  /** What the device's actor last knew: online or offline, when it last reported, what it reported. */
  async recordStatus(
    id: Types.ObjectId,
    s: { status: 'online' | 'offline'; lastHeartbeatAt?: Date; info?: Record<string, unknown> },
  ): Promise<void> {
    await this.db.models.Device.updateOne({ _id: id }, { $set: s }).exec();
  }

  findById(id: Types.ObjectId): Promise<DeviceRecord | null> {
    return this.db.models.Device.findById(id).lean<DeviceRecord>().exec();
  }

  /** Devices a user may use: their own and the shared (unowned) ones of the tenant. */
  listAvailable(userId: Types.ObjectId): Promise<DeviceRecord[]> {
    return this.db.models.Device.find({
      $or: [{ ownerUserId: userId }, { ownerUserId: null }, { ownerUserId: { $exists: false } }],
    })
      .sort({ name: 1, _id: 1 })
      .lean<DeviceRecord[]>()
      .exec();
  }

  findAvailable(id: Types.ObjectId, userId: Types.ObjectId): Promise<DeviceRecord | null> {
    return this.db.models.Device.findOne({
      _id: id,
      $or: [{ ownerUserId: userId }, { ownerUserId: null }, { ownerUserId: { $exists: false } }],
    })
      .lean<DeviceRecord>()
      .exec();
  }
}
