import type { TenantDb } from '../mongo.js';

export interface RoleRecord {
  name: string;
  description?: string | null;
  permissions: string[];
  builtin?: boolean | null;
}

/** Tenant roles and their permissions (built-in ones seeded by migrations, others defined by admins). */
export class RoleRepository {
  constructor(private readonly db: TenantDb) {}

  findByName(name: string): Promise<RoleRecord | null> {
    return this.db.models.Role.findOne({ name }).lean<RoleRecord>().exec();
  }

  list(): Promise<RoleRecord[]> {
    return this.db.models.Role.find({}).sort({ name: 1 }).lean<RoleRecord[]>().exec();
  }
}
