import { Types, type HydratedDocument } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { ImportDoc } from '../models/pending-user.model.js';

export type ImportRecord = HydratedDocument<ImportDoc>;
export interface RowError { row: number; field: string; message: string }

/** Import records of one tenant: the spreadsheet, progress counters and the capped per-row error report. */
export class ImportRepository {
  constructor(private readonly db: TenantDb) {}

  async create(input: { id: string; fileHash: string; fileName: string; requestedBy: string }): Promise<ImportRecord> {
    return this.db.models.Import.create({ _id: input.id, fileHash: input.fileHash, fileName: input.fileName, requestedBy: new Types.ObjectId(input.requestedBy) });
  }

  findById(id: string): Promise<ImportRecord | null> {
    return this.db.models.Import.findById(id);
  }

  /** (Re)starts a run from scratch: a retried job rebuilds the same report, upserts make rows idempotent. */
  async start(id: string): Promise<void> {
    await this.db.models.Import.updateOne({ _id: id }, { $set: { status: 'running', rowsDone: 0, rowsImported: 0, rowsTotal: 0, rowErrors: [], rowErrorCount: 0, startedAt: new Date() }, $unset: { error: 1, finishedAt: 1 } });
  }

  /** Adds a batch's counters and the errors still under the report cap. */
  async progress(id: string, p: { rowsDone: number; rowsImported: number; errors: RowError[]; errorCount: number }): Promise<void> {
    const update: Record<string, unknown> = { $inc: { rowsDone: p.rowsDone, rowsImported: p.rowsImported, rowErrorCount: p.errorCount } };
    if (p.errors.length) update.$push = { rowErrors: { $each: p.errors } };
    await this.db.models.Import.updateOne({ _id: id }, update);
  }

  async finish(id: string, rowsTotal: number): Promise<void> {
    await this.db.models.Import.updateOne({ _id: id }, { $set: { status: 'completed', rowsTotal, finishedAt: new Date() } });
  }

  async fail(id: string, error: string): Promise<void> {
    await this.db.models.Import.updateOne({ _id: id }, { $set: { status: 'failed', error, finishedAt: new Date() } });
  }
}
