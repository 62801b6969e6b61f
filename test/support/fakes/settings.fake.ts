import type {
  TenantConfigRepository,
  TenantSettingsRecord,
} from '../../../src/data/repositories/tenant-config.repository.js';
import type { RoleRecord, RoleRepository } from '../../../src/data/repositories/role.repository.js';
import type { FakeTenantDb } from './memory-db.js';
import type { PublicPart } from './port.js';

/** Sets a dotted path in a document, making the objects on the way (as `$set` does). */
function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = doc;
  for (const k of keys.slice(0, -1)) {
    const next = at[k];
    if (!next || typeof next !== 'object' || Array.isArray(next)) at[k] = {};
    at = at[k] as Record<string, unknown>;
  }
  at[keys.at(-1)!] = value;
}

/** The tenant's Settings document on a fake tenant database (src/data/repositories/tenant-config.repository.ts). */
export class FakeTenantConfigRepository implements PublicPart<TenantConfigRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get config() {
    return this.db.collection('TenantConfig');
  }

  async settings(): Promise<TenantSettingsRecord | null> {
    const d = this.config.byId('tenant');
    return d ? (this.config.read(d) as unknown as TenantSettingsRecord) : null;
  }

  /**
   * The same compare-and-set as the real one: with `ifRevision` only while `rev` is still that value
   * (null: the document has none yet); every write moves `rev` on. Values are validated by the schema
   * (the real write runs its validators), so a value outside an enum is refused the same way.
   */
  async setPaths(set: Record<string, unknown>, ifRevision?: number | null): Promise<TenantSettingsRecord | null> {
    const d = this.config.byId('tenant');
    if (!d) return null;
    if (
      ifRevision !== undefined &&
      (ifRevision === null ? d.rev !== undefined && d.rev !== null : d.rev !== ifRevision)
    )
      return null;
    const { before } = this.config.update(d, (draft) => {
      for (const [path, value] of Object.entries(set)) setPath(draft, path, value);
      draft.rev = (typeof draft.rev === 'number' ? draft.rev : 0) + 1;
    });
    return this.config.read(before) as unknown as TenantSettingsRecord;
  }
}

/** Tenant roles on a fake tenant database (src/data/repositories/role.repository.ts). */
export class FakeRoleRepository implements PublicPart<RoleRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get roles() {
    return this.db.collection('Role');
  }

  async findByName(name: string): Promise<RoleRecord | null> {
    const [r] = this.roles.find((d) => d.name === name);
    return (r as unknown as RoleRecord | undefined) ?? null;
  }

  async list(): Promise<RoleRecord[]> {
    const rows = this.roles.find() as unknown as RoleRecord[];
    return rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
