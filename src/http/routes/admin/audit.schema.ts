import { z } from 'zod';

export { AuditQuery } from '../../../core/audit/audit-query.js';

export const AuditEntryOut = z.object({
  seq: z.number().int().describe('position in the chain, from 1, without gaps'),
  id: z.string(),
  createdAt: z.string(),
  action: z.string(),
  outcome: z.enum(['success', 'failure']),
  actorId: z.string().optional(),
  subjectId: z.string().optional(),
  eventId: z.string().optional(),
  ip: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  prev: z.string().describe('hash of the entry before'),
  hash: z.string().describe('SHA-256 of the canonical encoding (RFC 8785)'),
});

export const AuditPage = z.object({
  items: z.array(AuditEntryOut),
  next: z.number().int().optional().describe('pass as `before` for the next (older) page'),
});

const BrokenLinkOut = z.object({
  seq: z.number().int().describe('the first entry that cannot be shown to be what was signed'),
  reason: z
    .enum(['gap', 'prev_mismatch', 'hash_mismatch', 'missing', 'not_signed', 'checkpoint_invalid', 'unsigned'])
    .describe('docs/audit.md: what each reason means'),
  expected: z.string(),
  found: z.string(),
});

export const ChainReportOut = z.object({
  tenant: z.string(),
  ok: z.boolean(),
  verified: z.number().int().describe('entries whose links and hashes verified, from position 1'),
  covered: z.number().int().describe('entries 1..covered verified and covered by the signed checkpoints'),
  head: z.object({ seq: z.number().int(), hash: z.string() }),
  checkpoints: z.number().int().describe('checkpoints checked'),
  firstBroken: BrokenLinkOut.optional(),
  message: z.string().optional().describe('what fails, naming the entry'),
});

export const CheckpointOut = z.object({
  seq: z.number().int(),
  hash: z.string(),
  createdAt: z.string(),
  kid: z.string(),
  jws: z.string().describe('compact JWS (ES256) over the canonical checkpoint statement'),
  jwk: z.record(z.string(), z.unknown()).describe('the public key that verifies the JWS'),
});
export const CheckpointList = z.object({ items: z.array(CheckpointOut) });
export const CheckpointResult = z.object({ checkpoint: CheckpointOut.nullable() });
export const FhirBundle = z
  .object({ resourceType: z.literal('Bundle'), type: z.literal('collection') })
  .passthrough()
  .describe('FHIR R4 Bundle of AuditEvent resources');
