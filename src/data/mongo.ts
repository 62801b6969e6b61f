import mongoose, { type Connection } from 'mongoose';
import { tenantModels, type TenantModels } from './tenant-models.js';
import { catalogModels, type CatalogModels } from './catalog-models.js';
import { detectServer, type ServerTraits } from './server-traits.js';
import { careTeamWrite, type CareTeamWrites } from './care-team-writes.js';

export interface MongoOptions {
  uri: string;
  catalogDb: string;
  tenantDbPrefix: string;
  timeoutMs: number;
}

/** A tenant's database with its models; the only handle repositories receive. */
export interface TenantDb {
  tenant: string;
  conn: Connection;
  models: TenantModels;
  /** What the server behind the connection does differently (FerretDB's work-arounds switch on here). */
  server: ServerTraits;
  /**
   * Notes, after the write, that these users' directory fields (name, role, status) changed, or `'all'`
   * for a bulk rewrite; the in-memory contact directory of every node catches up from it (decision 212).
   */
  usersChanged(ids: readonly string[] | 'all'): Promise<void>;
  /**
   * Runs a write that can change a care team (who is in an event or a group, or whether the event counts)
   * under the care-team cache's marks, so no patient's cached care team outlives it (decision 1132).
   */
  careTeamWrite<T>(write: () => Promise<T>): Promise<T>;
}

/** Hears every tenant's user changes (one per process: the contact directory). */
export type UsersChangedListener = (tenant: string, ids: readonly string[] | 'all') => Promise<void>;

/**
 * One MongoDB connection pool for the process; the catalog and each tenant are databases on it
 * (mongoose `useDb` with its cache), so tenants never share a collection.
 */
export class Mongo {
  readonly catalog: CatalogModels;
  private readonly tenants = new Map<string, TenantDb>();
  private usersChangedListener: UsersChangedListener | undefined;
  private careTeamWrites: CareTeamWrites | undefined;

  private constructor(
    readonly conn: Connection,
    private readonly opts: MongoOptions,
    readonly server: ServerTraits,
  ) {
    this.catalog = catalogModels(conn.useDb(opts.catalogDb, { useCache: true }));
  }

  static async connect(opts: MongoOptions): Promise<Mongo> {
    const conn = mongoose.createConnection(opts.uri, {
      serverSelectionTimeoutMS: opts.timeoutMs,
      connectTimeoutMS: opts.timeoutMs,
      socketTimeoutMS: 30_000,
      maxPoolSize: 50,
      autoIndex: false,
      autoCreate: false,
    });
    await conn.asPromise();
    return new Mongo(conn, opts, await detectServer(conn));
  }

  dbName(tenant: string): string {
    return `${this.opts.tenantDbPrefix}${tenant}`;
  }

  tenantDb(tenant: string): TenantDb {
    let db = this.tenants.get(tenant);
    if (!db) {
      const conn = this.conn.useDb(this.dbName(tenant), { useCache: true });
      db = {
        tenant,
        conn,
        models: tenantModels(conn),
        server: this.server,
        usersChanged: (ids) => this.usersChangedListener?.(tenant, ids) ?? Promise.resolve(),
        careTeamWrite: (write) => careTeamWrite(this.careTeamWrites, tenant, write),
      };
      this.tenants.set(tenant, db);
    }
    return db;
  }

  /** Sets the listener of user changes (the contact directory, decision 212). */
  onUsersChanged(listener: UsersChangedListener | undefined): void {
    this.usersChangedListener = listener;
  }

  /** Sets what every care-team write of every tenant tells (the care-team cache, set up with the connections). */
  onCareTeamWrites(marks: CareTeamWrites | undefined): void {
    this.careTeamWrites = marks;
  }

  async ping(): Promise<void> {
    await this.conn.db!.admin().command({ ping: 1 });
  }

  async dropTenantDb(tenant: string): Promise<void> {
    await this.tenantDb(tenant).conn.dropDatabase();
    this.tenants.delete(tenant);
  }

  async close(): Promise<void> {
    await this.conn.close();
  }
}
