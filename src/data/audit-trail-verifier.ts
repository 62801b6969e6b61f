import { calculateJwkThumbprint, type JWK } from 'jose';
import { ChainVerifier, type BrokenLink, type BrokenReason, type ChainedEntry } from './audit-chain.js';
import {
  GENESIS,
  openStatement,
  readStatement,
  type AnyCheckpointStatement,
  type ChainPoint,
} from './audit-checkpoint.js';

/** What a trail's verification trusts: the last signed head and the last checkpoint before it. */
export interface TrustRoot {
  /** The last entry signed: the export's head (its seal) or the last checkpoint's head (online). */
  seq: number;
  hash: string;
  /** The last checkpoint of the trail: its head's position and its statement's digest. */
  checkpoint: { seq: number; digest: string };
  /** How messages name it: "the seal", "checkpoint 42". */
  name: string;
}

/** One checkpoint as checked: its signature, its key and its link to the one before. */
export interface CheckpointCheck {
  seq: number;
  kid: string;
  createdAt: string;
  ok: boolean;
  error?: string;
}

/** The first position that cannot be shown to be what was signed, with a sentence naming it. */
export interface TrailProblem extends BrokenLink {
  message: string;
}

export interface TrailReport {
  ok: boolean;
  /** Entries whose links and hashes verified, from position 1. */
  verified: number;
  /** Entries 1..covered are verified and covered by trusted signatures. */
  covered: number;
  /** The last position whose links verified, and its hash. */
  head: ChainPoint;
  firstBroken?: BrokenLink;
  /** What fails, naming the entry (the first of `firstBroken`'s kind in chain order). */
  message?: string;
}

/** When several problems name one position, the most specific is reported. */
const RANK: Record<BrokenReason, number> = {
  gap: 0,
  prev_mismatch: 1,
  hash_mismatch: 2,
  missing: 3,
  not_signed: 4,
  checkpoint_invalid: 5,
  unsigned: 6,
};

interface Range {
  name: string;
  from: number;
  to: number;
  /** The signed hash of every entry in (from, to]; a legacy checkpoint signs only `to`. */
  hashes?: string[];
  head: string;
  valid: boolean;
}

/**
 * Verifies a trail read in chain order, with each checkpoint given before the entries it covers
 * (decision 1020): every link and hash from position 1 (ChainVerifier), every checkpoint's signature,
 * its key and its link to the checkpoint before, every entry against the hash its checkpoint signed,
 * and the end against a trust root (an export's seal, signed by a trusted key; online the last
 * checkpoint the service recorded outside the database). Memory: one checkpoint's hashes.
 */
export class TrailVerifier {
  private readonly chain: ChainVerifier;
  private root: TrustRoot | undefined;
  private untrusted = 'nothing signed them';
  private last = { seq: 0, digest: GENESIS.digest };
  private range: Range | undefined;
  private next = 1;
  private lastSeen = 0;
  private rootHash: string | undefined;
  private chainReported = false;
  private sawVersion2 = false;
  private readonly problems: TrailProblem[] = [];
  private knownPrints: Promise<Map<string, string>>;
  readonly checkpoints: CheckpointCheck[] = [];

  /** `known`: public keys whose `kid` a checkpoint may only use with that very key. */
  constructor(
    private readonly tenant: string,
    known: JWK[] = [],
  ) {
    this.chain = new ChainVerifier(tenant);
    this.knownPrints = Promise.all(
      known.filter((k) => k.kid).map(async (k) => [k.kid!, await calculateJwkThumbprint(k)] as const),
    ).then((pairs) => new Map(pairs));
  }

  /** What the end of the trail must match; without it nothing is covered. */
  trust(root: TrustRoot): void {
    this.root = root;
  }

  /** Why there is no trust root (shown with the uncovered entries). */
  distrust(why: string): void {
    this.root = undefined;
    this.untrusted = why;
  }

  /** A checkpoint, before the entries it covers. */
  async checkpoint(c: { jws: string; jwk: JWK; kid?: string; createdAt?: string | Date }): Promise<void> {
    this.closeRange();
    let statement: AnyCheckpointStatement | undefined;
    let digest: string | undefined;
    let error: string | undefined;
    try {
      ({ statement, digest } = await openStatement<AnyCheckpointStatement>(c.jws, c.jwk, 'audit-checkpoint'));
      if (statement.tenant !== this.tenant) throw new Error('signed for another tenant');
      const known = c.kid ? (await this.knownPrints).get(c.kid) : undefined;
      if (known && known !== (await calculateJwkThumbprint(c.jwk)))
        throw new Error(`key ${c.kid} is not the published key of that id`);
    } catch (e) {
      error = (e as Error).message;
      try {
        ({ statement, digest } = readStatement<AnyCheckpointStatement>(c.jws));
      } catch {
        statement = undefined;
      }
    }
    const seq = typeof statement?.seq === 'number' ? statement.seq : this.last.seq;
    const name = `checkpoint ${seq}`;
    const from = statement?.v === 2 ? statement.from : this.last.seq;
    if (!error && statement) error = this.linkError(statement);
    this.checkpoints.push({
      seq,
      kid: c.kid ?? '',
      createdAt: statement?.createdAt ?? (c.createdAt ? new Date(c.createdAt).toISOString() : ''),
      ok: !error,
      ...(error ? { error } : {}),
    });
    if (error)
      this.problem({
        seq: Math.min(from, this.last.seq) + 1,
        reason: 'checkpoint_invalid',
        expected: 'a valid checkpoint following the one before',
        found: error,
        message: `${name} does not verify (${error}): entries ${Math.min(from, this.last.seq) + 1}-${seq} are not covered by it`,
      });
    if (statement && digest) {
      if (statement.v === 2) this.sawVersion2 = true;
      this.range = {
        name,
        from,
        to: seq,
        ...(statement.v === 2 ? { hashes: statement.entries } : {}),
        head: statement.hash,
        valid: !error,
      };
      this.next = Math.max(this.next, from + 1);
      this.last = { seq, digest };
    }
  }

  /** The next entry in chain order. */
  entry(e: ChainedEntry): void {
    if (!this.chain.push(e) && !this.chainReported && this.chain.firstBroken) {
      this.chainReported = true;
      const b = this.chain.firstBroken;
      this.problem({ ...b, message: chainMessage(b) });
    }
    this.lastSeen = Math.max(this.lastSeen, e.seq);
    if (this.root && e.seq === this.root.seq) this.rootHash = e.hash;
    const r = this.range;
    if (!r || e.seq <= r.from || e.seq > r.to) return;
    if (e.seq > this.next && r.valid) this.missing(this.next, `${r.name} signed it`);
    this.next = Math.max(this.next, e.seq + 1);
    if (!r.valid) return;
    const signed = r.hashes ? r.hashes[e.seq - r.from - 1] : e.seq === r.to ? r.head : undefined;
    if (signed !== undefined && signed !== e.hash)
      this.problem({
        seq: e.seq,
        reason: 'not_signed',
        expected: signed,
        found: e.hash,
        message: `entry ${e.seq} is not the entry ${r.name} signed (the hash differs)`,
      });
  }

  /** Checks the end of the trail against the trust root and reports. */
  finish(): TrailReport {
    this.closeRange();
    const root = this.root;
    if (!root) {
      if (this.lastSeen > 0) this.unsigned(1, this.untrusted);
    } else {
      if (root.checkpoint.seq !== this.last.seq || root.checkpoint.digest !== this.last.digest) {
        const at = Math.min(root.checkpoint.seq, this.last.seq) + 1;
        this.problem({
          seq: at,
          reason: 'checkpoint_invalid',
          expected: `checkpoint ${root.checkpoint.seq} (${root.checkpoint.digest})`,
          found: `checkpoint ${this.last.seq} (${this.last.digest})`,
          message:
            `the checkpoints end at checkpoint ${this.last.seq} but ${root.name} names checkpoint ` +
            `${root.checkpoint.seq}: checkpoints after entry ${at - 1} were removed or altered`,
        });
      }
      if (this.lastSeen < root.seq)
        this.missing(this.lastSeen + 1, `${root.name} signed the trail up to entry ${root.seq}`);
      else if (root.seq > 0 && this.rootHash !== root.hash)
        this.problem({
          seq: root.seq,
          reason: 'not_signed',
          expected: root.hash,
          found: this.rootHash ?? '',
          message: `entry ${root.seq} is not the entry ${root.name} signed (the hash differs)`,
        });
      if (this.lastSeen > root.seq) this.unsigned(root.seq + 1, `${root.name} covers up to entry ${root.seq}`);
    }
    const first = [...this.problems].sort((a, b) => a.seq - b.seq || RANK[a.reason] - RANK[b.reason])[0];
    const top = root ? Math.min(root.seq, this.lastSeen) : 0;
    const covered = Math.max(0, first ? Math.min(first.seq - 1, top) : top);
    const report: TrailReport = { ok: !first, verified: this.chain.checked, covered, head: this.chain.head };
    if (first) {
      const { message, ...link } = first;
      report.firstBroken = link;
      report.message = message;
    }
    return report;
  }

  private linkError(s: AnyCheckpointStatement): string | undefined {
    if (s.v === 1) {
      if (this.sawVersion2) return 'a version 1 checkpoint after a version 2 one';
      return s.seq > this.last.seq ? undefined : `it does not come after checkpoint ${this.last.seq}`;
    }
    if (s.from !== this.last.seq || s.prev !== this.last.digest)
      return `it follows checkpoint ${s.from}, not checkpoint ${this.last.seq} before it: a checkpoint was removed or altered`;
    return undefined;
  }

  private closeRange(): void {
    const r = this.range;
    if (r?.valid && this.next <= r.to) this.missing(this.next, `${r.name} signed it`);
    this.range = undefined;
  }

  private missing(seq: number, why: string): void {
    this.problem({
      seq,
      reason: 'missing',
      expected: 'an entry',
      found: 'none',
      message: `entry ${seq} is missing: ${why}`,
    });
  }

  private unsigned(from: number, why: string): void {
    this.problem({
      seq: from,
      reason: 'unsigned',
      expected: 'a trusted checkpoint',
      found: 'none',
      message: `entries ${from}-${this.lastSeen} are not covered by a trusted checkpoint (${why})`,
    });
  }

  private problem(p: TrailProblem): void {
    if (this.problems.length < 100) this.problems.push(p);
  }
}

function chainMessage(b: BrokenLink): string {
  switch (b.reason) {
    case 'gap':
      return `entry ${b.seq} is missing: the chain goes on at entry ${b.found}`;
    case 'prev_mismatch':
      return `entry ${b.seq} does not link to entry ${b.seq - 1} (its prev is not that entry's hash)`;
    default:
      return `entry ${b.seq} was altered: its hash is not the hash of its content`;
  }
}
