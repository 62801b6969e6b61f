import type { TenantDb } from '../mongo.js';
import type { TenantConfigDoc } from '../models/tenant-config.model.js';

export type TenantSettingsRecord = TenantConfigDoc & { _id: string; updatedAt?: Date };

/** The tenant's Settings document (TenantConfig, features, security rules): read, and changed path by path. */
export class TenantConfigRepository {
  constructor(private readonly db: TenantDb) {}

  settings(): Promise<TenantSettingsRecord | null> {
    return this.db.models.TenantConfig.findById('tenant').lean<TenantSettingsRecord>().exec();
  }

  /**
   * Sets the given dotted paths only (one `$set`, never a whole-document write, so two administrators
   * changing different fields both keep their change); answers the document as it was before.
   */
  setPaths(set: Record<string, unknown>): Promise<TenantSettingsRecord | null> {
    return this.db.models.TenantConfig.findOneAndUpdate(
      { _id: 'tenant' },
      { $set: set },
      { returnDocument: 'before', runValidators: true },
    )
      .lean<TenantSettingsRecord>()
      .exec();
  }
}
