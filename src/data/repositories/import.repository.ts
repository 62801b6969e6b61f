import { Types, type HydratedDocument } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { ImportDoc } from '../models/pending-user.model.js';
import { pushOutbox, type OutboxEntry } from '../outbox.js';

export type { ImportRecord } from '../models/pending-user.model.js';
import type { ImportRecord } from '../models/pending-user.model.js';
export interface RowError {
  row: number;
  field: string;
  message: string;
}

/** Import records of one tenant: the spreadsheet, progress counters and the capped per-row error report. */
export class ImportRepository {
  constructor(private readonly db: TenantDb) {}

  async create(input: { id: string; fileHash: string; fileName: string; requestedBy: string }): Promise<ImportRecord> {
    return this.db.models.Import.create({
      _id: input.id,
      fileHash: input.fileHash,
      fileName: input.fileName,
      requestedBy: new Types.ObjectId(input.requestedBy),
    });
  }

  findById(id: string): Promise<ImportRecord | null> {
    return this.db.models.Import.findById(id);
  }

  /** The tenant's imports, newest first, without their row-error reports (read one import for that). */
  async list(skip: number, take: number): Promise<{ items: ImportRecord[]; total: number }> {
    const [items, total] = await Promise.all([
      this.db.models.Import.find({}).select('-rowErrors').sort({ createdAt: -1, _id: -1 }).skip(skip).limit(take),
      this.db.models.Import.countDocuments({}),
    ]);
    return { items, total };
  }

  /** (Re)starts a run from scratch: a retried job rebuilds the same report, upserts make rows idempotent. */
  async start(id: string): Promise<void> {
    await this.db.models.Import.updateOne(
      { _id: id },
      {
        $set: {
          status: 'running',
          rowsDone: 0,
          rowsImported: 0,
          rowsTotal: 0,
          rowErrors: [],
          rowErrorCount: 0,
          startedAt: new Date(),
        },
        $unset: { error: 1, finishedAt: 1 },
      },
    );
  }

  /** The rows a running import expects (counted before reading them); the end sets the rows read. */
  async expectRows(id: string, rowsTotal: number): Promise<void> {
    await this.db.models.Import.updateOne({ _id: id, status: 'running' }, { $set: { rowsTotal } });
  }

  /**
   * Adds a batch's counters and the errors still under the report cap; with `end`, the same update also
   * records how the run ended. The last counters and the outcome are one update on purpose: MongoDB-wire
   * servers that rewrite the whole document per update (FerretDB) have lost a counter increment followed
   * at once by a separate status update (decision 007).
   */
  async progress(
    id: string,
    p: { rowsDone: number; rowsImported: number; errors: RowError[]; errorCount: number },
    end?: ImportEnd,
    outbox?: OutboxEntry[],
  ): Promise<void> {
    const update: Record<string, unknown> = {
      $inc: { rowsDone: p.rowsDone, rowsImported: p.rowsImported, rowErrorCount: p.errorCount },
    };
    const push: Record<string, unknown> = {};
    if (p.errors.length) push.rowErrors = { $each: p.errors };
    // The run's end and its announcement are one update (decision 890).
    if (end && outbox?.length) push.outbox = { $each: outbox };
    if (Object.keys(push).length) update.$push = push;
    if (end) update.$set = endFields(end);
    await this.db.models.Import.updateOne({ _id: id }, update);
  }

  /** Records a run that ended before any row was read (the file itself was refused). */
  async fail(id: string, error: string, outbox?: OutboxEntry[]): Promise<void> {
    await this.db.models.Import.updateOne(
      { _id: id },
      { $set: endFields({ status: 'failed', error }), ...pushOutbox(outbox) },
    );
  }
}

/** How a run ended: completed with the rows it read, or failed with the reason. */
export type ImportEnd = { status: 'completed'; rowsTotal: number } | { status: 'failed'; error: string };

function endFields(end: ImportEnd): Record<string, unknown> {
  return end.status === 'completed'
    ? { status: 'completed', rowsTotal: end.rowsTotal, finishedAt: new Date() }
    : { status: 'failed', error: end.error, finishedAt: new Date() };
}
