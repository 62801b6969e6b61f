import { Types } from 'mongoose';
import type { DirectoryChangesStore } from '../stores/directory-changes.store.js';
import type { DirectoryFields, UserRepository } from '../repositories/user.repository.js';
import type { Logger } from '../../observability/logger.js';
import { DirectoryIndex } from './directory-index.js';
import { rangeInSlices } from './sliced-sort.js';
import { sharedString, type DirectoryEntry, type DirectoryQuery } from './directory-entry.js';
import type { StringOrder } from './string-order.js';

export interface ContactDirectoryDeps {
  /** The tenants' numbered change notes (Redis, shared by every node). */
  changes: Pick<DirectoryChangesStore, 'record' | 'version' | 'notes'>;
  users: (tenant: string) => Pick<UserRepository, 'directoryCursor' | 'directoryFields'>;
  /** The database server's string order, which the directory's order must equal. */
  order: StringOrder;
  maxTenants: number;
  maxEntries: number;
  rebuildMs: number;
  logger: Logger;
}

/** Change notes kept per tenant; a node further behind than this reloads the tenant. */
export const DIRECTORY_CHANGES_KEPT = 1000;

interface TenantState {
  index?: DirectoryIndex;
  /** Number of the last change note applied to `index`. */
  seq: number;
  loadedAt: number;
  /** A change was missed (gap, reset, bulk rewrite): `index` must not answer until reloaded. */
  stale: boolean;
  loading?: Promise<void>;
  /** The tenant has more active users than maxEntries: answered by the database until then. */
  tooBigUntil?: number;
  syncQueued?: Promise<void>;
  syncRunning?: Promise<void>;
}

/** How long the directory load decodes users before giving the event loop back (decision 641). */
const LOAD_SLICE_MS = 8;

/**
 * The id's 24 hex digits as one flat string: `toHexString` joins twelve pieces into a rope of about
 * 230 bytes, this takes 40 (decision 1136).
 */
function hexId(id: Types.ObjectId): string {
  const bytes = id.id;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * What the directory keeps of a user read from the database (decision 1136): no ObjectId, the id a flat
 * string, role, kind and initial shared, and the tokens in an array of their own size (a decoded array
 * took about 300 bytes more).
 */
export const toEntry = (u: DirectoryFields): DirectoryEntry => ({
  id: hexId(u._id),
  sortName: u.sortName,
  initial: sharedString(u.initial),
  nameTokens: u.nameTokens ? u.nameTokens.slice() : [],
  role: sharedString(u.role),
  kind: sharedString(u.kind),
  rank: -1,
});

/**
 * Per-tenant in-memory contact directory (decision 212), for servers that cannot answer the contact
 * search from an index. Every write of a user's directory fields adds a numbered change note in Redis
 * (`recordChange`); before answering, a node compares the tenant's number with the one it applied (one
 * GET) and re-reads the changed users by `_id`, so the node that wrote, and every other node, sees a
 * write in its next read. A gap in the numbers (trimmed notes, a Redis reset) or a bulk rewrite
 * reloads the tenant; until a tenant is loaded, the caller asks the database (`undefined`).
 */
export class ContactDirectory {
  private readonly tenants = new Map<string, TenantState>();

  private warming?: { loaded: number; total: number; startedAt: number; ms: number; done: boolean };

  constructor(private readonly deps: ContactDirectoryDeps) {}

  /**
   * Notes a change of these users (or of all, a bulk rewrite) for every node's directory, after the
   * database write. The write stands if Redis fails here: the failure is logged and this node reloads
   * the tenant; other nodes catch up at their periodic reload (CONTACT_DIRECTORY_REBUILD_SECONDS).
   */
  async recordChange(tenant: string, ids: readonly string[] | 'all'): Promise<void> {
    if (ids !== 'all' && !ids.length) return;
    try {
      await this.deps.changes.record(tenant, ids, DIRECTORY_CHANGES_KEPT);
    } catch (err) {
      this.deps.logger.warn(
        { component: 'contact-directory', tenant, err: (err as Error).message },
        'contact directory change note failed',
      );
      const st = this.tenants.get(tenant);
      if (st) st.stale = true;
    }
  }

  async search(tenant: string, q: DirectoryQuery): Promise<Types.ObjectId[] | undefined> {
    return (await this.prepared(tenant, q))?.search(q);
  }

  async count(tenant: string, q: Omit<DirectoryQuery, 'skip' | 'take'>, cap?: number): Promise<number | undefined> {
    return (await this.prepared(tenant, q))?.count(q, cap);
  }

  async initials(
    tenant: string,
    excludeId?: Types.ObjectId,
  ): Promise<{ initial: string; count: number }[] | undefined> {
    return (await this.current(tenant))?.initials(excludeId);
  }

  /**
   * Loads these tenants one after another (a node's start, decision 1139), as many as it holds
   * (`maxTenants`): until then /readyz says the node is not ready, so a balancer sends its searches to
   * nodes that answer them from memory. A load that fails or finds a tenant too big ends that
   * tenant's part (the database answers it).
   */
  async warm(tenants: readonly string[]): Promise<void> {
    const list = tenants.slice(0, this.deps.maxTenants);
    const warming = { loaded: 0, total: list.length, startedAt: performance.now(), ms: 0, done: false };
    this.warming = warming;
    for (const tenant of list) {
      await this.load(tenant, this.state(tenant));
      warming.loaded++;
    }
    warming.ms = performance.now() - warming.startedAt;
    warming.done = true;
    this.deps.logger.info(
      { component: 'contact-directory', tenants: list.length, ms: Math.round(warming.ms) },
      'contact directory warm',
    );
  }

  /** The start's loading (`warm`): tenants loaded of those to load, and for how long; undefined before it. */
  warmth(): { loaded: number; total: number; ms: number; done: boolean } | undefined {
    const w = this.warming;
    if (!w) return undefined;
    return { loaded: w.loaded, total: w.total, done: w.done, ms: w.done ? w.ms : performance.now() - w.startedAt };
  }

  /** Loads the tenant now if it is not loaded, and says whether it answers from memory. */
  async ready(tenant: string): Promise<boolean> {
    const st = this.state(tenant);
    if (!st.index || st.stale) await this.load(tenant, st);
    return (await this.current(tenant)) !== undefined;
  }

  /** Tenants held in memory (observability and tests). */
  heldTenants(): string[] {
    return [...this.tenants].filter(([, st]) => st.index).map(([t]) => t);
  }

  /**
   * The tenant's index as `current` gives it, with the token buckets this search needs sorted (in
   * slices, decision 1137): the search itself then holds the event loop only for its own work.
   */
  private async prepared(tenant: string, q: Pick<DirectoryQuery, 'name'>): Promise<DirectoryIndex | undefined> {
    const index = await this.current(tenant);
    const sorting = index?.prepare(q);
    if (sorting) await sorting;
    return index;
  }

  /** The tenant's index, brought up to date with every change noted so far; undefined: ask the database. */
  private async current(tenant: string): Promise<DirectoryIndex | undefined> {
    const st = this.state(tenant);
    const now = Date.now();
    if (st.tooBigUntil && now < st.tooBigUntil) return undefined;
    if (!st.index || st.stale || now - st.loadedAt > this.deps.rebuildMs) void this.load(tenant, st);
    if (!st.index || st.stale) return undefined;
    await this.sync(tenant, st);
    return st.stale ? undefined : st.index;
  }

  /** The tenant's state, most recently used last; the least recently used tenant beyond the cap is dropped. */
  private state(tenant: string): TenantState {
    let st = this.tenants.get(tenant);
    if (st) this.tenants.delete(tenant);
    else st = { seq: 0, loadedAt: 0, stale: false };
    this.tenants.set(tenant, st);
    while (this.tenants.size > this.deps.maxTenants) this.tenants.delete(this.tenants.keys().next().value!);
    return st;
  }

  /**
   * One sync at a time per tenant; a caller joins the queued one (not yet started, so it will see
   * every note written before the caller asked), else queues the next.
   */
  private sync(tenant: string, st: TenantState): Promise<void> {
    if (st.syncQueued) return st.syncQueued;
    const previous = st.syncRunning;
    const slot: { p?: Promise<void> } = {};
    slot.p = (async () => {
      await previous?.catch(() => undefined);
      st.syncQueued = undefined;
      st.syncRunning = slot.p;
      await this.catchUp(tenant, st);
    })();
    st.syncQueued = slot.p;
    return slot.p;
  }

  private async catchUp(tenant: string, st: TenantState): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const index = st.index;
      const from = st.seq;
      if (!index || st.stale) return;
      const v = await this.deps.changes.version(tenant);
      if (v === from) return;
      if (v < from) return this.missed(tenant, st, 'change numbers went back (Redis reset)');
      const notes = await this.deps.changes.notes(tenant, from, v);
      if (notes.length !== v - from || notes.some((p, i) => p.seq !== from + 1 + i))
        return this.missed(tenant, st, 'change notes missing');
      if (notes.some((p) => p.ids === 'all')) return this.missed(tenant, st, 'bulk rewrite');
      const ids = [...new Set(notes.flatMap((p) => (p.ids === 'all' ? [] : p.ids)))]
        .filter((id) => Types.ObjectId.isValid(id))
        .map((id) => new Types.ObjectId(id));
      const rows = await this.deps.users(tenant).directoryFields(ids);
      if (st.index !== index || st.seq !== from) continue; // reloaded meanwhile: start again from its number
      const found = new Map(rows.map((r) => [String(r._id), r]));
      // In slices of the event loop (a write costs a few milliseconds at 1,000,000 users, and up to
      // DIRECTORY_CHANGES_KEPT notes come at once): a search that runs between two slices sees some of
      // these users written and not yet the others, as one between two of their writes would.
      let reloaded = false;
      await rangeInSlices(
        ids.length,
        (from, to) => {
          if ((reloaded ||= st.index !== index || st.stale)) return;
          for (let i = from; i < to; i++) {
            const id = String(ids[i]);
            const row = found.get(id);
            if (row && row.status === 'active') index.upsert(toEntry(row));
            else index.remove(id);
          }
        },
        8,
      );
      // Reloaded meanwhile: the new index has its own number and holds these writes.
      if (!reloaded && st.index === index) st.seq = v;
      return;
    }
  }

  private missed(tenant: string, st: TenantState, why: string): void {
    this.deps.logger.info({ component: 'contact-directory', tenant, why }, 'contact directory reloads');
    st.stale = true;
    void this.load(tenant, st);
  }

  /** Reads the tenant's active users into a new index (one at a time per tenant). */
  private load(tenant: string, st: TenantState): Promise<void> {
    if (st.loading) return st.loading;
    st.loading = (async () => {
      const started = performance.now();
      const seq = await this.deps.changes.version(tenant);
      const entries: DirectoryEntry[] = [];
      let sliceStart = performance.now();
      for await (const u of this.deps.users(tenant).directoryCursor()) {
        if (entries.length >= this.deps.maxEntries) {
          Object.assign(st, { index: undefined, stale: false, tooBigUntil: Date.now() + this.deps.rebuildMs });
          return;
        }
        entries.push(toEntry(u));
        // Buffered documents are decoded as they are taken, in microtasks: without this the whole
        // batch (all of it, on servers that ignore batchSize) would be decoded without a break.
        if ((entries.length & 127) === 0 && performance.now() - sliceStart > LOAD_SLICE_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      }
      Object.assign(st, {
        index: await DirectoryIndex.build(this.deps.order, entries),
        seq,
        loadedAt: Date.now(),
        stale: false,
        tooBigUntil: undefined,
      });
      this.deps.logger.info(
        {
          component: 'contact-directory',
          tenant,
          entries: entries.length,
          ms: Math.round(performance.now() - started),
        },
        'contact directory loaded',
      );
    })()
      .catch((err: unknown) =>
        this.deps.logger.warn(
          { component: 'contact-directory', tenant, err: (err as Error).message },
          'contact directory load failed',
        ),
      )
      .finally(() => {
        st.loading = undefined;
      });
    return st.loading;
  }
}
