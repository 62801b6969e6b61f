/**
 * The in-memory directory's entries by id (decision 1137): open addressing over a slot array and the
 * ids' hashes in a typed array beside it, so that a lookup reads another entry's id only when the hashes
 * match. A `Map` of 1,000,000 ids took about 1.3 s to fill, most of it comparing with keys of the same
 * bucket, each a string elsewhere in the heap. Sized for its count up front (`reserve`); a removal
 * leaves a marker, and the table is rebuilt when live entries and markers fill 5/8 of it.
 */

/** A 32-bit hash of a string's units (FNV-1a). */
export function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/** Where an entry was removed: a lookup goes on past it, an insert may take it. */
const GONE = null;

export class ById<E extends { id: string }> {
  private slots: (E | typeof GONE | undefined)[] = new Array<undefined>(16);
  private hashes = new Int32Array(16);
  private mask = 15;
  /** Live entries, and live entries with the markers of removed ones. */
  private live = 0;
  private used = 0;

  get size(): number {
    return this.live;
  }

  /** Makes room for `count` entries in all without rebuilding. */
  reserve(count: number): void {
    let size = this.slots.length;
    while (count + (this.used - this.live) > size * 0.625) size *= 2;
    if (size !== this.slots.length) this.rebuild(size);
  }

  get(id: string): E | undefined {
    const at = this.find(id, hashOf(id));
    return at < 0 ? undefined : (this.slots[at] as E);
  }

  has(id: string): boolean {
    return this.find(id, hashOf(id)) >= 0;
  }

  /** Adds `e` (true), or puts it in place of the entry with its id (false). */
  set(e: E): boolean {
    const h = hashOf(e.id);
    const at = this.find(e.id, h);
    if (at >= 0) {
      this.slots[at] = e;
      return false;
    }
    if (this.used + 1 > this.slots.length * 0.625)
      this.rebuild(this.live + 1 > this.slots.length * 0.3 ? this.slots.length * 2 : this.slots.length);
    for (let i = (h ^ (h >>> 16)) & this.mask; ; i = (i + 1) & this.mask) {
      const slot = this.slots[i];
      if (slot === undefined || slot === GONE) {
        if (slot === undefined) this.used++;
        this.slots[i] = e;
        this.hashes[i] = h;
        this.live++;
        return true;
      }
    }
  }

  delete(id: string): boolean {
    const at = this.find(id, hashOf(id));
    if (at < 0) return false;
    this.slots[at] = GONE;
    this.live--;
    return true;
  }

  /** The entries, in no particular order. */
  *values(): IterableIterator<E> {
    for (const slot of this.slots) if (slot) yield slot;
  }

  /** The slot of the entry with this id, or -1. */
  private find(id: string, h: number): number {
    for (let i = (h ^ (h >>> 16)) & this.mask; ; i = (i + 1) & this.mask) {
      const slot = this.slots[i];
      if (slot === undefined) return -1;
      if (slot !== GONE && this.hashes[i] === h && slot.id === id) return i;
    }
  }

  private rebuild(size: number): void {
    const slots = this.slots;
    const hashes = this.hashes;
    this.slots = new Array<undefined>(size);
    this.hashes = new Int32Array(size);
    this.mask = size - 1;
    this.used = this.live;
    for (let j = 0; j < slots.length; j++) {
      const e = slots[j];
      if (!e) continue;
      const h = hashes[j]!;
      let i = (h ^ (h >>> 16)) & this.mask;
      while (this.slots[i] !== undefined) i = (i + 1) & this.mask;
      this.slots[i] = e;
      this.hashes[i] = h;
    }
  }
}
