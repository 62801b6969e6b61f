import type { CatalogModels } from '../catalog-models.js';
import type { TenantDoc } from '../models/tenant.model.js';

export type TenantRecord = TenantDoc & { _id: unknown };

/** Catalog of tenants. */
export class TenantRepository {
  private indexed?: Promise<void>;

  constructor(private readonly m: CatalogModels) {}

  findByName(name: string): Promise<TenantRecord | null> {
    return this.m.Tenant.findOne({ name }).lean<TenantRecord>().exec();
  }

  /** The unique name index exists before the first insert, so two concurrent creates cannot both win. */
  async create(t: { name: string; displayName: string }): Promise<TenantRecord> {
    await (this.indexed ??= this.ensureIndexes().catch((e) => {
      this.indexed = undefined;
      throw e;
    }));
    const doc = await this.m.Tenant.create({ ...t, status: 'active', schemaVersion: 0 });
    return doc.toObject() as TenantRecord;
  }

  async setSchemaVersion(name: string, version: number): Promise<void> {
    await this.m.Tenant.updateOne({ name }, { $max: { schemaVersion: version } });
  }

  async setTelemetryKeyHash(name: string, hash: string): Promise<void> {
    await this.m.Tenant.updateOne({ name }, { $set: { telemetryKeyHash: hash } });
  }

  list(): Promise<TenantRecord[]> {
    return this.m.Tenant.find({}).sort({ name: 1 }).lean<TenantRecord[]>().exec();
  }

  async ensureIndexes(): Promise<void> {
    await this.m.Tenant.createCollection().catch(() => undefined);
    await this.m.Tenant.createIndexes();
  }
}
