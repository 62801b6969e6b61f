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
