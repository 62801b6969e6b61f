import type { TenantDb } from '../mongo.js';
import type { TenantConfigDoc } from '../models/tenant-config.model.js';

export type TenantSettingsRecord = TenantConfigDoc & { _id: string; updatedAt?: Date; rev?: number | null };

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
  setPaths(set: Record<string, unknown>, ifRevision?: number | null): Promise<TenantSettingsRecord | null> {
    // With `ifRevision` (the `rev` read, null when it had none): only if nobody changed the document
    // meanwhile, so rules checked across fields against that read still hold; null answers "changed
    // meanwhile". Every write moves the revision on, with or without the condition.
    const unchanged = ifRevision === undefined ? {} : { rev: ifRevision ?? { $exists: false } };
    return this.db.models.TenantConfig.findOneAndUpdate(
      { _id: 'tenant', ...unchanged },
      { $set: set, $inc: { rev: 1 } },
      { returnDocument: 'before', runValidators: true },
    )
      .lean<TenantSettingsRecord>()
      .exec();
  }
}
