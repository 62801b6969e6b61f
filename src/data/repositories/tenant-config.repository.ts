import type { TenantDb } from '../mongo.js';
import type { SettingsDoc } from '../models/settings.model.js';

export type TenantSettingsRecord = SettingsDoc & { _id: string; updatedAt?: Date };

/** Read side of the tenant's Settings document (TenantConfig, features) for the directory and GraphQL. */
export class TenantConfigRepository {
  constructor(private readonly db: TenantDb) {}

  settings(): Promise<TenantSettingsRecord | null> {
    return this.db.models.Settings.findById('tenant').lean<TenantSettingsRecord>().exec();
  }
}
