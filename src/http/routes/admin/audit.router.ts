import type { Response } from 'express';
import { op, type RouteGroup } from '../route-spec.js';
import { auditFilterOf } from '../../../core/audit/audit-query.js';
import type { AuditCheckpointRecord, AuditRecord } from '../../../core/audit/audit.service.js';
import { AuditPage, AuditQuery, ChainReportOut, CheckpointList, CheckpointResult, FhirBundle } from './audit.schema.js';
import { RULE_NOTES } from '../../../kernel/requirement.js';

const presentEntry = (e: AuditRecord) => ({ ...e, createdAt: e.createdAt.toISOString() });
const presentCheckpoint = (c: AuditCheckpointRecord) => ({ ...c, createdAt: c.createdAt.toISOString() });

/** Streams lines of JSON (ndjson) as an attachment, one object per line. */
async function sendLines(res: Response, name: string, type: string, lines: AsyncIterable<unknown>): Promise<void> {
  res.setHeader('Content-Type', `${type}; charset=utf-8`);
  res.setHeader('Content-Disposition', `attachment; filename="${name}"`);
  res.setHeader('Cache-Control', 'no-store');
  for await (const line of lines) {
    if (!res.write(`${JSON.stringify(line)}\n`)) await new Promise((r) => res.once('drain', r));
  }
  res.end();
}

/** /api/admin/audit: the tenant's tamper-evident audit trail (docs/audit.md). */
export const adminAuditRoutes: RouteGroup = {
  base: '/api/admin',
  tag: 'Audit trail',
  routes: [
    op({
      operationId: 'audit.list',
      requires: 'audit:read',
      method: 'get',
      path: '/audit',
      query: AuditQuery,
      response: AuditPage,
      summary:
        'Audit entries, newest first, filtered by action, actor, subject, consultation and time; paged by position',
      handle: async (s, { p, query }) => {
        const take = Math.min(query.take, 500);
        const items = await s.auth.audit.list(p.tenant, auditFilterOf(query), take);
        const last = items[items.length - 1];
        return { items: items.map(presentEntry), ...(items.length === take && last ? { next: last.seq } : {}) };
      },
    }),
    op({
      operationId: 'audit.verify',
      requires: 'audit:read',
      note: RULE_NOTES.signsFirst,
      method: 'get',
      path: '/audit/verify',
      response: ChainReportOut,
      summary:
        "Verify the tenant's trail against its signed checkpoints (what is new is signed first when it links) and name the first entry that fails",
      handle: (s, { p }) => s.auth.audit.verify(p.tenant),
    }),
    op({
      operationId: 'audit.checkpoints',
      requires: 'audit:read',
      method: 'get',
      path: '/audit/checkpoints',
      response: CheckpointList,
      summary: 'Signed checkpoints of the chain head, newest first',
      handle: async (s, { p }) => ({ items: (await s.auth.audit.checkpoints(p.tenant)).map(presentCheckpoint) }),
    }),
    op({
      operationId: 'audit.checkpoint',
      requires: 'tenant:admin',
      note: "signs the entries written since the last checkpoint with the service's key",
      method: 'post',
      path: '/audit/checkpoint',
      response: CheckpointResult,
      errors: ['audit_chain_broken'],
      summary: 'Sign the entries written since the last checkpoint now (refused when they do not link to its head)',
      handle: async (s, { p }) => {
        const c = await s.auth.audit.checkpoint(p.tenant);
        return { checkpoint: c ? presentCheckpoint(c) : null };
      },
    }),
    op({
      operationId: 'audit.export',
      requires: 'audit:read',
      note: 'sealed at export time; signs the new entries first (decision 1020)',
      method: 'get',
      path: '/audit/export',
      binary: {
        description:
          'ndjson: a header, the seal signed at export time over the last entry and checkpoint, then each checkpoint followed by the entries it signs',
        ranged: false,
      },
      summary: 'Export the trail, sealed at export time, for offline verification (npm run audit-verify)',
      handle: (s, { p, res }) =>
        sendLines(res, `audit-${p.tenant}.ndjson`, 'application/x-ndjson', s.auth.audit.exportLines(p.tenant)),
    }),
    op({
      operationId: 'audit.fhir',
      requires: 'audit:read',
      method: 'get',
      path: '/audit/fhir',
      query: AuditQuery,
      response: FhirBundle,
      summary: 'Audit entries as a FHIR R4 Bundle of AuditEvent resources (same filters and paging as the list)',
      handle: (s, { p, query, res }) => {
        res.type('application/fhir+json');
        return s.auth.audit.fhirBundle(p.tenant, auditFilterOf(query), Math.min(query.take, 500));
      },
    }),
    op({
      operationId: 'audit.fhirBulk',
      requires: 'audit:read',
      method: 'get',
      path: '/audit/fhir/bulk',
      binary: { description: 'FHIR bulk data: one AuditEvent per line (ndjson), in chain order', ranged: false },
      summary: 'The whole trail as FHIR R4 AuditEvents in ndjson (bulk export)',
      handle: (s, { p, res }) =>
        sendLines(
          res,
          `audit-${p.tenant}.AuditEvent.ndjson`,
          'application/fhir+ndjson',
          s.auth.audit.fhirLines(p.tenant),
        ),
    }),
  ],
};
