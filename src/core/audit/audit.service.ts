import { ChainVerifier, type BrokenLink } from '../../data/audit-chain.js';
import { AppError } from '../../kernel/errors.js';
import { auditBundle, toAuditEvent, type ParticipantKind } from './audit-fhir.js';
import type { UserRepository } from '../../data/repositories/user.repository.js';
import type { AuditAnchorStore } from '../../data/stores/audit-anchor.store.js';
import { Types } from 'mongoose';
import type {
  AuditRepository,
  AuditEntry,
  AuditRecord,
  AuditFilter,
  AuditCheckpointRecord,
} from '../../data/repositories/audit.repository.js';
import {
  AuditSigning,
  chainEntries,
  type ChainReport,
  type CheckpointSigner,
  type ExportLine,
} from './audit-signing.js';

export type { AuditEntry, AuditRecord, AuditFilter, BrokenLink, AuditCheckpointRecord };
export type { ChainReport, CheckpointSigner, ExportLine };
export { EXPORT_FORMAT } from './audit-signing.js';

/** What a check of the links alone found (no signatures): see `verifyLinks`. */
export interface LinkReport {
  tenant: string;
  ok: boolean;
  verified: number;
  head: { seq: number; hash: string };
  firstBroken?: BrokenLink;
}

/** Entries read per round trip while converting to FHIR. */
const BATCH = 500;

/**
 * Audit actions. Security: sign-in and sessions, impersonation, PINs, offline tokens, roles. Clinical:
 * consultations, meetings, recordings, media, devices, imports, tenant configuration. Other capabilities
 * add their own names in the same `area.verb` shape (docs/audit.md lists them).
 */
export type AuditAction =
  | 'signin.success'
  | 'signin.failure'
  | 'signin.lockout'
  | 'logout'
  | 'session.reuse_detected'
  | 'session.refresh_retried'
  | 'impersonation.start'
  | 'impersonation.end'
  | 'impersonation.request'
  | 'pin.reset'
  | 'pin.set'
  | 'offline_token.issue'
  | 'offline_token.revoke'
  | 'login_code.approve'
  | 'login_code.refuse'
  | 'role.assign'
  | (string & {});

/**
 * Writes and reads the tenant's tamper-evident audit trail (decision 880). `record` is awaited by the
 * callers so an action is never unrecorded; it costs one insert when this process knows the chain's head.
 */
export class AuditService {
  constructor(
    private readonly deps: {
      audits(tenant: string): AuditRepository;
      /** Who is behind a user id, for the FHIR references (Practitioner, Patient or Device). */
      users?(tenant: string): Pick<UserRepository, 'findByIds'>;
      /** Signing and verifying against checkpoints need both (decision 1020). */
      signer?: CheckpointSigner;
      anchors?: Pick<AuditAnchorStore, 'get' | 'advance'>;
    },
  ) {
    const { signer, anchors } = deps;
    this.signing = signer && anchors ? new AuditSigning({ audits: deps.audits, signer, anchors }) : undefined;
  }

  private readonly signing: AuditSigning | undefined;

  private signed(): AuditSigning {
    if (!this.signing) throw new AppError('service_unavailable', 'No signing key is configured for checkpoints');
    return this.signing;
  }

  /** Appends one entry to the tenant's chain and returns it with its position and hash. */
  record(tenant: string, entry: AuditEntry & { action: AuditAction }): Promise<AuditRecord> {
    return this.deps.audits(tenant).append(entry);
  }

  /** Newest first, filtered (action, actor, subject, event, time range), paged by `beforeSeq`. */
  list(tenant: string, filter: AuditFilter, limit?: number): Promise<AuditRecord[]> {
    return this.deps.audits(tenant).list(filter, limit);
  }

  /** Every entry of the chain in order. */
  entries(tenant: string, afterSeq = 0): AsyncGenerator<AuditRecord> {
    return chainEntries(this.deps.audits(tenant), afterSeq);
  }

  /**
   * Re-computes every link of the tenant's chain from the first entry: positions without gaps, each
   * `prev` the hash of the entry before, each hash that of the entry's canonical encoding. Says nothing
   * of signatures: someone who rewrites the trail re-computes the links too (`verify` checks both).
   */
  async verifyLinks(tenant: string): Promise<LinkReport> {
    const v = new ChainVerifier(tenant);
    for await (const e of this.entries(tenant)) if (!v.push(e)) break;
    return {
      tenant,
      ok: !v.firstBroken,
      verified: v.checked,
      head: v.head,
      ...(v.firstBroken ? { firstBroken: v.firstBroken } : {}),
    };
  }

  /**
   * Verifies the trail against its signed checkpoints (decision 1020): every link and hash, every
   * checkpoint, every entry against the hash a checkpoint signed, up to the last checkpoint the service
   * signed (kept outside the database). What is new is signed first when it links. The report names the
   * first entry that fails.
   */
  verify(tenant: string): Promise<ChainReport> {
    return this.signed().verify(tenant);
  }

  /**
   * Signs the entries written since the last checkpoint (decisions 881, 1020) after checking that they
   * link to its head; the last checkpoint when nothing is new, null for an empty trail;
   * `audit_chain_broken` when they do not link or the signed head is gone.
   */
  checkpoint(tenant: string): Promise<AuditCheckpointRecord | null> {
    return this.signed().checkpoint(tenant);
  }

  /** Checkpoints newest first. */
  checkpoints(tenant: string, limit = 100): Promise<AuditCheckpointRecord[]> {
    return this.deps.audits(tenant).checkpoints(limit);
  }

  /** The trail as ndjson lines for an auditor, sealed at export time (docs/audit.md). */
  exportLines(tenant: string): AsyncGenerator<ExportLine> {
    return this.signed().exportLines(tenant);
  }

  /** Entries (newest first, filtered like `list`) as a FHIR R4 Bundle of AuditEvents. */
  async fhirBundle(tenant: string, filter: AuditFilter, limit?: number): Promise<Record<string, unknown>> {
    const entries = await this.list(tenant, filter, limit);
    const kindOf = await this.participantKinds(tenant, entries);
    return auditBundle(entries.map((e) => toAuditEvent(tenant, e, kindOf)));
  }

  /** The whole trail in chain order as FHIR AuditEvents, one resource per line (bulk export, ndjson). */
  async *fhirLines(tenant: string): AsyncGenerator<Record<string, unknown>> {
    let batch: AuditRecord[] = [];
    const flush = async function* (this: AuditService) {
      const kindOf = await this.participantKinds(tenant, batch);
      for (const e of batch) yield toAuditEvent(tenant, e, kindOf);
      batch = [];
    };
    for await (const e of this.entries(tenant)) {
      batch.push(e);
      if (batch.length >= BATCH) yield* flush.call(this);
    }
    yield* flush.call(this);
  }

  /** Kinds of the users an entry names: devices are Device, patients Patient, every other role Practitioner. */
  private async participantKinds(tenant: string, entries: AuditRecord[]): Promise<(id: string) => ParticipantKind> {
    const ids = new Set(entries.flatMap((e) => [e.actorId, e.subjectId]).filter((v): v is string => !!v));
    const valid = [...ids].filter((id) => Types.ObjectId.isValid(id) && /^[a-f0-9]{24}$/i.test(id));
    const users =
      valid.length && this.deps.users
        ? await this.deps.users(tenant).findByIds(valid.map((id) => new Types.ObjectId(id)))
        : [];
    const kinds = new Map<string, ParticipantKind>(
      users.map((u) => [
        String(u._id),
        u.kind === 'device' ? 'Device' : u.role === 'patient' ? 'Patient' : 'Practitioner',
      ]),
    );
    return (id) => kinds.get(id) ?? 'Practitioner';
  }
}
