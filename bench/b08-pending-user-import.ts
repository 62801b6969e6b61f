/**
 * B8: pending-user import of a 100k-row spreadsheet: upload to POST /api/uploads/pendingUsers, the
 * BullMQ import job (streaming read through src/spreadsheet, row validation, batched upserts by username, progress),
 * until the import reports completed. Rows/s over upload + import, and the node's peak RSS (http and
 * workers in one process). The baseline is exceljs's streaming read of the same file alone.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { productEnv, tenantHost } from './harness/env.js';
import {
  startProduct,
  startBaseline,
  stopProduct,
  missingModules,
  missingRoles,
  firstReason,
  logFile,
} from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import { pendingUsersSheet } from './harness/inputs.js';
import type { HostProcess } from './harness/hosts.js';
import { cpuDuring, untilQuiet } from './harness/proc-cpu.js';
import { compactedStore } from './harness/store-compaction.js';
import { listenerPid } from '../scripts/ports.mjs';
import { request } from '../test/support/http.js';

const MiB = 2 ** 20;
/**
 * The import is given `importTimeoutMs`: on a database that cannot keep up, the figures are the rows
 * done by then (`completed` 0), so the run stays bounded.
 */
const settings = {
  rows: scaled(100_000, 2000),
  pollMs: 500,
  importTimeoutMs: scaled(120_000, 60_000),
  /** The database's own rate is measured this long before and again after each import (the mean is the reference). */
  referenceMs: scaled(5000, 1000),
};

/** The import's status as GET /api/uploads/pendingUsers/{importId} answers it (the fields read here). */
interface ImportStatus {
  status: string;
  rowsDone: number;
  rowsImported: number;
  rowErrorCount: number;
  error?: unknown;
  createdAt?: string;
  startedAt?: string;
  finishedAt?: string;
}

/**
 * Polls the import's status until it finished. A failed poll (the status read itself timing out
 * while the import loads the database) is counted and retried, not fatal: the import is measured.
 */
async function waitImport(
  url: string,
  host: string,
  token: string,
  location: string,
): Promise<ImportStatus & { failedPolls: number }> {
  const until = Date.now() + settings.importTimeoutMs;
  let failedPolls = 0;
  let last: ImportStatus = { status: 'unknown', rowsDone: 0, rowsImported: 0, rowErrorCount: 0 };
  for (;;) {
    const r = await request(url, 'GET', location, { host, token }).catch((e: Error) => ({
      status: 0,
      text: e.message,
      body: {} as any,
    }));
    if (r.status === 200) last = r.body;
    else failedPolls++;
    if (last.status === 'completed' || last.status === 'failed' || Date.now() > until) return { ...last, failedPolls };
    await new Promise((res) => setTimeout(res, settings.pollMs));
  }
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const env = productEnv(ctx, 'b08', { ROLES: 'http,workers' });
  let node: HostProcess | undefined;
  /**
   * A second node on the same databases measures the database's own insert rate, so the importing
   * node's memory (its peak RSS is checked) holds only the import's own work, however fast the
   * database is (at 30,000 inserts/s the reference inserts 150,000 documents per round).
   */
  let ceilingNode: HostProcess | undefined;
  let reader: HostProcess | undefined;
  let file = '';
  /** The database server's process (its CPU is reported beside the node's). */
  let dbPid: number | undefined;
  /**
   * The database's own rate for pending-user rows in the import's batches, measured from the other
   * node, with the CPU it cost the server and that node.
   */
  const reference = async (tenant: string) => {
    // As the import: from a compacted store (decision 1181) and a quiet database server (the import's tail
    // is not the reference's, nor its own the import's).
    const compaction = await compactedStore(ctx.mongoUri);
    const settled = await untilQuiet(dbPid);
    const { result, cpu } = await cpuDuring({ client: ceilingNode!.pid, db: dbPid }, () =>
      ceilingNode!.call<{ docs_per_s: number; docs: number }>('insertCeiling', {
        tenant,
        model: 'PendingUser',
        batch: 1000,
        concurrency: 1,
        durationMs: settings.referenceMs,
      }),
    );
    return { ...result, cpu, quietWaitMs: settled.waitedMs, compactWaitMs: compaction.waitedMs };
  };
  const importOnce = async (tenant: string) => {
    await node!.call('tenant', { name: tenant });
    const token = (
      await node!.call<{ token: string }[]>('users', { tenant, prefix: 'importer', count: 1, role: 'admin' })
    )[0]!.token;
    const url = node!.info.url as string;
    const host = tenantHost(url, tenant);
    const before = await node!.peakReset();
    // The import's window starts with the store compacted (decision 1181) and the database server quiet,
    // not in the tail of the reference's inserts (decision 1179).
    const compaction = await compactedStore(ctx.mongoUri);
    const settled = await untilQuiet(dbPid);
    const t0 = Date.now();
    const { result, cpu } = await cpuDuring({ node: node!.pid, db: dbPid }, async () => {
      const up = await runLoad(
        'upload',
        {
          url,
          path: '/api/uploads/pendingUsers',
          multipart: true,
          file,
          fileName: 'pending-users.xlsx',
          headers: { host, authorization: `Bearer ${token}` },
          deadlineMs: 120_000,
        },
        logFile(ctx, `b08-load-upload-${tenant}`),
      );
      const done = await waitImport(url, host, token, `/api/uploads/pendingUsers/${JSON.parse(up.body).importId}`);
      return { up, done };
    });
    const { up, done } = result;
    // The round starts with the upload's request, not with the load generator's process start.
    const start = typeof up.startedAt === 'number' ? up.startedAt : t0;
    // The import's own end (the node's clock is this machine's), not the poll that saw it: a poll every
    // 500 ms would add 250 ms on average to a round of a few seconds.
    const finished = done.finishedAt ? Date.parse(done.finishedAt) : Date.now();
    const seconds = (finished - start) / 1000;
    if (done.status === 'failed') throw new Error(`import failed: ${JSON.stringify(done.error ?? '')}`);
    if (done.status !== 'completed')
      ctx.log(`  import still ${done.status} after ${seconds} s: ${done.rowsDone} of ${settings.rows} rows`);
    const { peakRss } = await node!.peak();
    // What the node holds after the import and a full GC: how much of the peak is V8's heap, how much
    // is memory outside it (Buffers, native), and how much the process keeps without either.
    const after = await node!.mem();
    return {
      up,
      done,
      seconds,
      finished,
      cpu,
      peakRss,
      before,
      after,
      quietWaitMs: settled.waitedMs,
      compactWaitMs: compaction.waitedMs,
    };
  };
  const productRound = async (i: number): Promise<Figures> => {
    // A fresh tenant per round: every round imports the same usernames as new pending users.
    const tenant = `bench${i}`;
    // The reference brackets the import (before and after, same tenant's database), so a server that
    // speeds up or slows down over the run weighs on both sides of the share alike.
    await node!.call('tenant', { name: tenant });
    const refBefore = await reference(tenant);
    const { up, done, seconds, finished, cpu, peakRss, before, after, quietWaitMs, compactWaitMs } =
      await importOnce(tenant);
    const refAfter = await reference(tenant);
    const refRate = (refBefore.docs_per_s + refAfter.docs_per_s) / 2;
    const refDocs = refBefore.docs + refAfter.docs;
    const completed = done.status === 'completed' && done.rowsImported === settings.rows ? 1 : 0;
    const rows = completed ? done.rowsImported : done.rowsDone;
    const rowsPerS = rows / seconds;
    const perK = (cpuS: number, n: number) => (cpuS < 0 || !n ? -1 : (cpuS * 1000 * 1000) / n);
    return {
      rows_per_s: rowsPerS,
      db_insert_rows_per_s: refRate,
      db_insert_before_rows_per_s: refBefore.docs_per_s,
      db_insert_after_rows_per_s: refAfter.docs_per_s,
      share_of_db_insert: rowsPerS / refRate,
      rows_done: done.rowsDone,
      completed,
      seconds,
      // Where the round's time went: the upload's response, the job waiting in the queue, the job itself.
      upload_s: up.elapsedMs / 1000,
      queued_s:
        done.startedAt && done.createdAt ? (Date.parse(done.startedAt) - Date.parse(done.createdAt)) / 1000 : -1,
      job_s: done.startedAt ? (finished - Date.parse(done.startedAt)) / 1000 : -1,
      // CPU per 1,000 rows: the importing node's and the database server's during the import, then the
      // server's and its client's while the reference inserts the same documents (-1: not readable).
      node_cpu_ms_per_1k_rows: perK(cpu.node!, rows),
      db_cpu_ms_per_1k_rows: perK(cpu.db!, rows),
      ref_db_cpu_ms_per_1k_rows: perK(refBefore.cpu.db! + refAfter.cpu.db!, refDocs),
      ref_client_cpu_ms_per_1k_rows: perK(refBefore.cpu.client! + refAfter.cpu.client!, refDocs),
      // How long each window waited for the database server to be quiet (30 s at most).
      db_quiet_wait_ms: quietWaitMs,
      ref_db_quiet_wait_ms: (refBefore.quietWaitMs + refAfter.quietWaitMs) / 2,
      // How long each waited for the store's chunks to age and be compacted (decision 1181).
      db_compact_wait_ms: compactWaitMs,
      ref_db_compact_wait_ms: (refBefore.compactWaitMs + refAfter.compactWaitMs) / 2,
      peak_rss_mib: peakRss / MiB,
      rss_growth_mib: (peakRss - before) / MiB,
      rss_after_gc_mib: after.rss / MiB,
      heap_total_after_gc_mib: after.heapTotal / MiB,
      heap_used_after_gc_mib: after.heapUsed / MiB,
      external_after_gc_mib: after.external / MiB,
      failed_status_polls: done.failedPolls,
    };
  };
  const baselineRound = async (): Promise<Figures> => {
    const before = await reader!.peakReset();
    const r = await reader!.call<{ rows: number; elapsedMs: number }>('read', { file });
    if (r.rows !== settings.rows) throw new Error(`exceljs read ${r.rows} rows, expected ${settings.rows}`);
    const { peakRss } = await reader!.peak();
    return {
      rows_per_s: r.rows / (r.elapsedMs / 1000),
      seconds: r.elapsedMs / 1000,
      peak_rss_mib: peakRss / MiB,
      rss_growth_mib: (peakRss - before) / MiB,
    };
  };
  return {
    product: {
      label: 'product',
      async start() {
        file = await pendingUsersSheet(ctx.cacheDir, settings.rows);
        node = await startProduct(ctx, 'b08', 'node', env);
        ceilingNode = await startProduct(ctx, 'b08', 'node', { ...env, ROLES: 'http' });
        dbPid = listenerPid(Number(new URL(ctx.mongoUri).port));
        // One import before the rounds, not measured: the node's and the database server's code is
        // compiled by their JITs, and the server's file has grown past its first pages, before round 1.
        await importOnce('benchwarm');
      },
      round: productRound,
      stop: () => stopProduct(ctx, [node, ceilingNode], env),
    },
    baseline: {
      label: 'exceljs streaming read alone',
      async start() {
        file = await pendingUsersSheet(ctx.cacheDir, settings.rows);
        reader = await startBaseline(ctx, 'b08', 'exceljs-read.ts');
      },
      round: baselineRound,
      stop: async () => reader?.stop(),
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b08',
  title: 'Pending-user import of 100k rows: rows/s and peak RSS',
  // The exceljs read of the file alone stores nothing: its rate is context, not a verdict (an importer
  // that stores what it reads cannot reach half of it); the verdicts are the database's rate and memory.
  target: ">= 95% of the database's own insert rate (issue 38); RSS <= 300 MiB (exceljs alone: context)",
  baselineName: 'exceljs streaming read of the same file alone',
  rounds: scaled(5, 1),
  settings,
  ratioFigure: 'rows_per_s',
  unavailable: () =>
    firstReason(
      missingRoles('workers'),
      missingModules(
        'src/http/routes/uploads/uploads.router.ts',
        'src/workers/jobs/pending-user-import.job.ts',
        'test/support/auth.ts',
      ),
    ),
  sides: async (ctx) => sides(ctx),
  checks: (p) => [
    check('import completed', p.completed, 'min', 1),
    check("share of the database's insert rate", p.share_of_db_insert, 'min', 0.95),
    check('peak RSS MiB', p.peak_rss_mib, 'max', 300),
  ],
};
