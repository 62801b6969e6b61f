import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';

export interface DeviceRegistrationRecord {
  hardwareId: string;
  accountId: string;
  via: 'admin' | 'pairing';
  by: string;
  createdAt: Date;
}

type Row = { _id: string; accountId: Types.ObjectId; via: 'admin' | 'pairing'; by: Types.ObjectId; createdAt: Date };

const record = (r: Row): DeviceRegistrationRecord => ({
  hardwareId: r._id,
  accountId: String(r.accountId),
  via: r.via,
  by: String(r.by),
  createdAt: r.createdAt,
});

/** Device registrations and pairing codes of one tenant (decision 1041). */
export class DeviceRegistrationRepository {
  constructor(private readonly db: TenantDb) {}

  /** The registration of any of `ids` (the hardware id a headset gave, the one id it resolves to). */
  async findAny(ids: readonly string[]): Promise<DeviceRegistrationRecord[]> {
    const rows = await this.db.models.DeviceRegistration.find({ _id: { $in: [...new Set(ids)] } })
      .lean<Row[]>()
      .exec();
    return rows.map(record);
  }

  async list(limit: number): Promise<DeviceRegistrationRecord[]> {
    const rows = await this.db.models.DeviceRegistration.find({}).sort({ _id: 1 }).limit(limit).lean<Row[]>().exec();
    return rows.map(record);
  }

  /**
   * Registers `hardwareId` to `accountId` unless it is registered already: answers the registration
   * that holds (this one, or the earlier one of whichever account).
   */
  async register(
    hardwareId: string,
    accountId: Types.ObjectId,
    via: 'admin' | 'pairing',
    by: Types.ObjectId,
  ): Promise<DeviceRegistrationRecord> {
    try {
      await this.db.models.DeviceRegistration.create({ _id: hardwareId, accountId, via, by });
    } catch (e) {
      if ((e as { code?: number }).code !== 11000) throw e;
    }
    const [held] = await this.findAny([hardwareId]);
    return held!;
  }

  async remove(hardwareId: string): Promise<boolean> {
    const r = await this.db.models.DeviceRegistration.deleteOne({ _id: hardwareId }).exec();
    return r.deletedCount === 1;
  }

  async createPairing(codeHash: string, hardwareId: string, accountId: Types.ObjectId, expiresAt: Date) {
    await this.db.models.DevicePairing.create({ _id: codeHash, hardwareId, accountId, expiresAt });
  }

  /** Takes a pairing code once: the pairing it names when unexpired (and removes it), else null. */
  async takePairing(codeHash: string, now: Date): Promise<{ hardwareId: string; accountId: Types.ObjectId } | null> {
    const row = await this.db.models.DevicePairing.findOneAndDelete({ _id: codeHash })
      .lean<{ hardwareId: string; accountId: Types.ObjectId; expiresAt: Date }>()
      .exec();
    return row && row.expiresAt.getTime() > now.getTime() ? row : null;
  }

  /** Whether the user exists and is a device account (role `device` or kind `device`). */
  async isDeviceAccount(userId: Types.ObjectId): Promise<boolean> {
    return Boolean(await this.db.models.User.exists({ _id: userId, $or: [{ role: 'device' }, { kind: 'device' }] }));
  }
}
