import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { AppError, isAppError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import type { ImportProgressPush } from '../../contracts/pushes.js';
import type { ImportRepository, ImportEnd, ImportRecord, RowError } from '../../data/repositories/import.repository.js';
import type { PendingUserRepository, PendingUserRow } from '../../data/repositories/pending-user.repository.js';
import type { MediaFileRepository } from '../../data/repositories/media-file.repository.js';
import type { ObjectStore } from '../../storage/object-store.js';
import { layout } from '../../storage/layout.js';
import { checkExtension, guardedSource, uploadFailure } from './upload-policy.js';
import type { UploadPart } from './media.service.js';
import {
  countWorksheetRows,
  DEFAULT_SPREADSHEET_LIMITS,
  openWorkbook,
  type RangeReader,
  type SpreadsheetLimits,
  type Workbook,
} from '../../spreadsheet/index.js';
import { readPendingUserSheetChunks, type SheetRow } from './pending-user-sheet.js';
import { announce, type AnnounceHook } from '../webhooks/webhook-events.js';
import { recordBy, type AuditRecorder } from '../audit/audit-by.js';
import type { OutboxEntry } from '../../data/outbox.js';

export interface ImportDeps {
  store: ObjectStore;
  imports(tenant: string): ImportRepository;
  pendingUsers(tenant: string): PendingUserRepository;
  mediaFiles(tenant: string): MediaFileRepository;
  /** Tells the uploader's connections how the import goes (at most once a second, and at the end). */
  notify(tenant: string, userId: string, push: ImportProgressPush): void;
  /** Queues the import job (idempotent by tenant and import id). */
  enqueueImport(job: { tenant: string; importId: string }): Promise<unknown>;
  limits?: Partial<SpreadsheetLimits>;
  /** Publishes the outbound events a change stored in its outbox (decision 890). */
  announced?: AnnounceHook;
  /** The tenant's audit trail: an import started by whom, and how it ended (docs/audit.md). */
  audit?: AuditRecorder;
  /** Tenants with at most this many users have their usernames read once per import (default 50,000). */
  heldUsernames?: number;
}

export interface ImportSummary {
  rowsTotal: number;
  rowsImported: number;
  rowErrors: number;
}

export type ImportProgress = (p: { done: number; imported: number; errors: number }) => Promise<void>;

/** Rows upserted per round trip, and how many row errors the stored report keeps. */
const BATCH = 1000;
export const MAX_REPORTED_ERRORS = 1000;
/** About 3 MiB of usernames: below it a tenant's usernames are read once per import, not per batch. */
const HELD_USERNAMES = 50_000;

/**
 * Bulk import of pending users (POST /api/uploads/pendingUsers): the spreadsheet is stored, an Import
 * record tracks progress and the per-row error report, and a job streams the sheet into upserts keyed
 * by username. A retried job starts the report over; the upserts make the rows themselves idempotent.
 */
export class ImportService {
  private readonly limits: SpreadsheetLimits;

  constructor(private readonly deps: ImportDeps) {
    this.limits = { ...DEFAULT_SPREADSHEET_LIMITS, ...deps.limits };
  }

  /** Stores the uploaded xlsx, creates the Import and queues its job. */
  async start(principal: Principal, parts: AsyncIterable<UploadPart>): Promise<ImportRecord> {
    const uploadLimits = await this.deps.mediaFiles(principal.tenant).uploadLimits();
    if (!uploadLimits) throw new AppError('tenant_not_found', 'The tenant is not provisioned');
    let stored: { hash: string; fileName: string } | undefined;
    for await (const part of parts) {
      if (part.type === 'field') continue;
      if (part.name !== 'file' || stored) {
        part.stream.resume();
        throw new AppError('validation_failed', 'Exactly one file part named "file" is expected', {
          errors: [{ field: 'file', message: 'exactly one file' }],
        });
      }
      stored = await this.storeSheet(principal.tenant, part.fileName, part.stream);
    }
    if (!stored)
      throw new AppError('validation_failed', 'file: a spreadsheet is required', {
        errors: [{ field: 'file', message: 'required' }],
      });
    const record = await this.deps.imports(principal.tenant).create({
      id: randomUUID(),
      fileHash: stored.hash,
      fileName: stored.fileName,
      requestedBy: principal.userId,
    });
    await recordBy(this.deps.audit, principal, 'import.start', {
      details: { importId: record.id, kind: 'pendingUsers', fileHash: stored.hash, fileName: stored.fileName },
    });
    await this.deps.enqueueImport({ tenant: principal.tenant, importId: record.id });
    return record;
  }

  private async storeSheet(tenant: string, fileName: string, stream: Readable) {
    try {
      checkExtension(fileName, { maxBytes: this.limits.maxFileBytes, allowedExtensions: ['xlsx'], maxImagePixels: 0 });
    } catch (e) {
      stream.resume();
      throw e;
    }
    const put = await this.deps.store
      .putContentAddressed(layout.importsPrefix(tenant), guardedSource(stream, 'xlsx'), {
        contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        maxBytes: this.limits.maxFileBytes,
      })
      .catch((e: unknown) => {
        stream.resume();
        throw uploadFailure(e);
      });
    return { hash: put.sha256, fileName: fileName.slice(0, 255) };
  }

  /** Progress and the error report of one import of the caller's tenant. */
  async status(principal: Principal, importId: string): Promise<ImportRecord> {
    const record = await this.deps.imports(principal.tenant).findById(importId);
    if (!record) throw new AppError('import_not_found');
    return record;
  }

  /** The end of an import in the trail: the job acts for no one, the uploader is its subject. */
  private async finished(
    data: { tenant: string; importId: string },
    uploader: string,
    outcome: 'success' | 'failure',
    details: Record<string, unknown>,
  ): Promise<void> {
    await this.deps.audit?.record(data.tenant, {
      action: 'import.complete',
      outcome,
      subjectId: uploader,
      details: { importId: data.importId, kind: 'pendingUsers', ...details },
    });
  }

  /** The job: checks the container, streams rows, upserts in batches, reports progress. */
  async run(
    data: { tenant: string; importId: string },
    progress: ImportProgress = async () => undefined,
  ): Promise<ImportSummary> {
    const imports = this.deps.imports(data.tenant);
    const record = await imports.findById(data.importId);
    if (!record) throw new AppError('import_not_found');
    if (record.status === 'completed')
      return { rowsTotal: record.rowsTotal, rowsImported: record.rowsImported, rowErrors: record.rowErrorCount ?? 0 };
    await imports.start(data.importId);
    const uploader = record.requestedBy.toString();
    let rowsTotal: number | undefined;
    const tell = (
      status: ImportProgressPush['status'],
      t: { done: number; imported: number; errors: number },
      error?: string,
    ) =>
      this.deps.notify(data.tenant, uploader, {
        importId: data.importId,
        status,
        rowsDone: t.done,
        ...(status === 'completed' ? { rowsTotal: t.done } : rowsTotal !== undefined ? { rowsTotal } : {}),
        rowsImported: t.imported,
        rowErrorCount: t.errors,
        ...(error ? { error } : {}),
      });
    const reported: ImportProgress = async (t) => {
      await progress(t);
      tell('running', t);
    };
    const key = layout.import(data.tenant, record.fileHash);
    // The sheet's rows are counted beside the import, not before it: the count only feeds progress.
    let counting: Promise<void> | undefined;
    const read: RangeReader = async (start, end) => (await this.deps.store.get(key, { start, end })).body;
    let book: Workbook;
    try {
      const info = await this.deps.store.head(key);
      if (!info) throw new AppError('spreadsheet_rejected', 'The uploaded spreadsheet is missing');
      book = await openWorkbook(read, info.size, this.limits);
      // The sheet's rows minus its header: progress says "done of total" (an estimate: blank rows are skipped).
      counting = countWorksheetRows(book, book.sheet)
        .catch(() => undefined)
        .then(async (rows) => {
          if (rows === undefined) return;
          rowsTotal = Math.max(0, rows - 1);
          await imports.expectRows(data.importId, rowsTotal);
        });
      counting.catch(() => undefined); // awaited before each write of the import's counters
    } catch (e) {
      if (isAppError(e) && e.code === 'spreadsheet_rejected') {
        await imports.fail(data.importId, e.message, [
          importFinished(data.importId, { status: 'failed', error: e.message }),
        ]);
        await this.deps.announced?.(data.tenant);
        await this.finished(data, uploader, 'failure', { error: e.message });
        tell('failed', { done: 0, imported: 0, errors: 0 }, e.message);
      }
      throw e;
    }
    try {
      const summary = await this.importRows(data.tenant, data.importId, book, reported, counting);
      await this.finished(data, uploader, 'success', { ...summary });
      tell('completed', { done: summary.rowsTotal, imported: summary.rowsImported, errors: summary.rowErrors });
      return summary;
    } catch (e) {
      if (isAppError(e) && e.code === 'spreadsheet_rejected') {
        const now = await imports.findById(data.importId);
        await this.finished(data, uploader, 'failure', { error: e.message, rowsDone: now?.rowsDone ?? 0 });
        tell(
          'failed',
          { done: now?.rowsDone ?? 0, imported: now?.rowsImported ?? 0, errors: now?.rowErrorCount ?? 0 },
          e.message,
        );
      }
      throw e;
    } finally {
      await this.deps.announced?.(data.tenant);
    }
  }

  private async importRows(
    tenant: string,
    importId: string,
    book: Workbook,
    progress: ImportProgress,
    counting: Promise<void> | undefined,
  ): Promise<ImportSummary> {
    const users = this.deps.pendingUsers(tenant);
    const [roles, existingUsers] = await Promise.all([
      users.roleNames(),
      users.existingUsersCheck(this.deps.heldUsernames ?? HELD_USERNAMES),
    ]);
    const batch = new ImportBatch(this.deps.imports(tenant), users, existingUsers, importId, roles, counting);
    // One batch is written while the next is read from the sheet (decision 406); batches are written
    // one after the other, in sheet order. A full batch's check for existing users starts at once,
    // beside the previous batch's write.
    let writing: Promise<void> | undefined;
    try {
      for await (const rows of readPendingUserSheetChunks(book, this.limits))
        for (const row of rows) {
          if (batch.add(row) < BATCH) continue;
          const sealed = batch.seal();
          await writing;
          writing = batch.flush(sealed).then(async (totals) => {
            if (totals) await progress(totals);
          });
          writing.catch(() => undefined); // awaited at the next batch or below
        }
      await writing;
      await progress((await batch.flush(batch.seal(), { status: 'completed' }))!);
    } catch (e) {
      await writing?.catch(() => undefined);
      // Rows read before a rejection (row limit, unreadable part) stay imported and reported.
      if (isAppError(e) && e.code === 'spreadsheet_rejected')
        await batch.flush(batch.seal(), { status: 'failed', error: e.message });
      throw e;
    }
    return batch.summary();
  }
}

/** A batch taken from the sheet: its rows, its row errors so far, and the lookup of existing users. */
interface SealedBatch {
  rows: PendingUserRow[];
  errors: RowError[];
  existing: Promise<Set<string>>;
}

/**
 * Accumulates rows batch by batch: unknown roles, existing users and repeats of an earlier row's
 * username (found as the batch is stored) become row errors. Rows are upserted every batch; the Import's counters are written at most once a second and
 * the capped error report (bounded in memory) once at the end, because a record carrying the report
 * is rewritten whole on every update and that would dominate a large import.
 */
class ImportBatch {
  private rows: PendingUserRow[] = [];
  private errors: RowError[] = [];
  private readonly report: RowError[] = [];
  private totals = { done: 0, imported: 0, errors: 0 };
  private pending = { done: 0, imported: 0, errors: 0 };
  private lastWrite = Date.now();

  constructor(
    private readonly imports: ImportRepository,
    private readonly users: PendingUserRepository,
    /** Which of a batch's usernames are users of the tenant already (PendingUserRepository.existingUsersCheck). */
    private readonly existingUsers: (usernames: readonly string[]) => Promise<Set<string>>,
    private readonly importId: string,
    private readonly roles: Set<string>,
    /**
     * The write of the sheet's row count, awaited before each write of the counters: one writer at a
     * time on the Import (servers that rewrite the whole document per update can lose one of two
     * concurrent updates, decision 007), and the estimate lands before the end sets the total read.
     */
    private readonly counted: Promise<void> = Promise.resolve(),
  ) {}

  add(r: SheetRow): number {
    if (!r.ok) this.errors.push({ row: r.row, field: r.field, message: r.message });
    else if (!this.roles.has(r.value.role))
      this.errors.push({ row: r.row, field: 'role', message: `unknown role '${r.value.role}'` });
    else {
      const { username, email, displayName, role } = r.value;
      this.rows.push({ username, email, displayName, role, rowNumber: r.row });
    }
    return this.rows.length + this.errors.length;
  }

  /**
   * Takes the rows read so far as a batch (the next rows go into a new one) and starts looking up
   * which of its usernames are users of the tenant already, before the batch is written.
   */
  seal(): SealedBatch {
    const { rows, errors } = this;
    this.rows = [];
    this.errors = [];
    const existing = this.existingUsers(rows.map((r) => r.username));
    existing.catch(() => undefined); // awaited by flush
    return { rows, errors, existing };
  }

  /**
   * Upserts a sealed batch; returns the running totals when they were written, else undefined. With
   * `end` (the last flush) the counters, the error report and how the run ended are written in one update.
   */
  async flush(
    batch: SealedBatch,
    end?: { status: 'completed' } | { status: 'failed'; error: string },
  ): Promise<{ done: number; imported: number; errors: number } | undefined> {
    const final = end !== undefined;
    const { rows, errors } = batch;
    const done = rows.length + errors.length;
    const existing = await batch.existing;
    const fresh = rows.filter((r) => !existing.has(r.username));
    for (const r of rows)
      if (existing.has(r.username))
        errors.push({ row: r.rowNumber, field: 'username', message: 'already a user of the tenant' });
    // A username an earlier row of the import holds is a repeat (first wins): the repository finds it
    // by the unique index, so no set of the sheet's usernames is held here (decision 1180).
    const { stored: imported, repeats } = await this.users.upsertMany(fresh, this.importId);
    for (const r of repeats) errors.push({ row: r.rowNumber, field: 'username', message: `duplicate of row ${r.of}` });
    const room = Math.max(0, MAX_REPORTED_ERRORS - this.report.length);
    this.report.push(...errors.sort((a, b) => a.row - b.row).slice(0, room));
    this.totals = {
      done: this.totals.done + done,
      imported: this.totals.imported + imported,
      errors: this.totals.errors + errors.length,
    };
    this.pending = {
      done: this.pending.done + done,
      imported: this.pending.imported + imported,
      errors: this.pending.errors + errors.length,
    };
    if (!final && Date.now() - this.lastWrite < 1000) return undefined;
    const p = this.pending;
    const outcome: ImportEnd | undefined =
      end && (end.status === 'completed' ? { status: 'completed', rowsTotal: this.totals.done } : end);
    await this.counted;
    await this.imports.progress(
      this.importId,
      { rowsDone: p.done, rowsImported: p.imported, errors: final ? this.report : [], errorCount: p.errors },
      outcome,
      outcome && [
        importFinished(this.importId, {
          ...outcome,
          rowsTotal: this.totals.done,
          rowsImported: this.totals.imported,
          rowErrors: this.totals.errors,
        }),
      ],
    );
    this.pending = { done: 0, imported: 0, errors: 0 };
    this.lastWrite = Date.now();
    return { done: this.totals.done, imported: this.totals.imported, errors: this.totals.errors };
  }

  summary(): ImportSummary {
    return { rowsTotal: this.totals.done, rowsImported: this.totals.imported, rowErrors: this.totals.errors };
  }
}

/** The `import.finished` event of a run's end: counts only, never a row's content. */
function importFinished(importId: string, outcome: Record<string, unknown>): OutboxEntry {
  return announce('import.finished', undefined, { importId, ...outcome });
}
