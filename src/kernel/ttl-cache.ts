/**
 * A small in-process cache whose entries expire after `ttlMs` and whose size is bounded (the oldest
 * entry goes first). For facts that may be briefly stale by design; every user documents how stale.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { at: number; value: V }>();

  constructor(private readonly opts: { ttlMs: number; maxEntries: number; now?: () => number }) {}

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (this.now() - hit.at >= this.opts.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { at: this.now(), value });
    while (this.entries.size > this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
  }

  /** The cached value, else `load`'s, which is then kept (a loaded `undefined` is not). */
  async getOrLoad(key: K, load: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = await load();
    this.set(key, value);
    return value;
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose key matches (e.g. all of one tenant's after a write). */
  deleteWhere(match: (key: K) => boolean): void {
    for (const k of [...this.entries.keys()]) if (match(k)) this.entries.delete(k);
  }

  get size(): number {
    return this.entries.size;
  }
}
