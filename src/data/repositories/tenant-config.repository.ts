import type { TenantDb } from '../mongo.js';
import type { TenantConfigDoc } from '../models/tenant-config.model.js';

export type TenantSettingsRecord = TenantConfigDoc & { _id: string; updatedAt?: Date };

/** Read side of the tenant's Settings document (TenantConfig, features) for the directory and GraphQL. */
export class TenantConfigRepository {
  constructor(private readonly db: TenantDb) {}

  settings(): Promise<TenantSettingsRecord | null> {
    return this.db.models.TenantConfig.findById('tenant').lean<TenantSettingsRecord>().exec();
  }
}
