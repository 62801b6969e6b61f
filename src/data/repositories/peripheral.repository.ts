import type { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { PeripheralTypeDoc } from '../models/peripheral-type.model.js';

export type { PeripheralTypeRecord } from '../models/peripheral-type.model.js';
import type { PeripheralTypeRecord } from '../models/peripheral-type.model.js';

/** Peripheral types (seeded per tenant by migrations). */
export class PeripheralRepository {
  constructor(private readonly db: TenantDb) {}

  listTypes(): Promise<PeripheralTypeRecord[]> {
    return this.db.models.PeripheralType.find({}).sort({ name: 1 }).lean<PeripheralTypeRecord[]>().exec();
  }

  findType(id: Types.ObjectId): Promise<PeripheralTypeRecord | null> {
    return this.db.models.PeripheralType.findById(id).lean<PeripheralTypeRecord>().exec();
  }

  findTypes(ids: readonly Types.ObjectId[]): Promise<PeripheralTypeRecord[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.db.models.PeripheralType.find({ _id: { $in: ids } })
      .lean<PeripheralTypeRecord[]>()
      .exec();
  }
}
