/** Open-addressing tables over typed arrays that the directory's build uses (decision 1137). */

/**
 * The first string given with each hash, a bucket of token rows at a time: open addressing in a typed
 * array (per slot, 1 + the string's number and its hash) sized for the bucket, so that it stays in the
 * processor's cache. The hashes (FNV-1a, as `hashOf` in by-id.ts) come from the build's first pass
 * over the tokens, and no string is read here: the build checks each copy against the token it stands
 * for afterwards, reading the tokens in memory order. A `Map` of the 2,200,000 distinct tokens of
 * 1,000,000 users took several times as long (decision 1137).
 */
export class FirstByHash {
  private slots = new Int32Array(32);
  private mask = 15;
  private readonly values: string[] = [];
  /** Whether the last string given was the first with its hash. */
  first = false;

  /** Forgets the strings given, with room for `most` more. */
  reset(most: number): void {
    let size = 16;
    while (size < most * 1.5) size *= 2;
    if (this.slots.length < 2 * size) this.slots = new Int32Array(2 * size);
    else this.slots.fill(0, 0, 2 * size);
    this.mask = size - 1;
    this.values.length = 0;
  }

  /** The first string given with the hash `h` since the last reset, else `s` itself. */
  of(s: string, h: number): string {
    for (let at = (h ^ (h >>> 16)) & this.mask; ; at = (at + 1) & this.mask) {
      const id = this.slots[2 * at]! - 1;
      if (id < 0) {
        this.slots[2 * at] = this.values.push(s);
        this.slots[2 * at + 1] = h;
        this.first = true;
        return s;
      }
      if (this.slots[2 * at + 1] === h) {
        this.first = false;
        return this.values[id]!;
      }
    }
  }
}

/**
 * Numbers for the bucket keys met, in the order met: open addressing over typed arrays (a `Map` boxed
 * every key, a number beyond 32 bits, on each of the 4,400,000 rows of 1,000,000 users).
 */
export class BucketIds {
  readonly keys: number[] = [];
  private slotKeys = new Float64Array(64);
  private slotIds = new Int32Array(64);
  private mask = 63;

  /** The number of `key` (0, 1, ... in the order keys are first given). */
  id(key: number): number {
    const h0 = Math.imul((key % 0x100000000) ^ Math.imul(Math.floor(key / 0x100000000), 0x9e3779b1), 0x85ebca6b);
    for (let at = (h0 ^ (h0 >>> 15)) & this.mask; ; at = (at + 1) & this.mask) {
      const id = this.slotIds[at]! - 1;
      if (id < 0) break;
      if (this.slotKeys[at] === key) return id;
    }
    this.keys.push(key);
    if (this.keys.length * 2 > this.slotIds.length) this.rebuild();
    else this.place(key, this.keys.length - 1);
    return this.keys.length - 1;
  }

  private place(key: number, id: number): void {
    const h0 = Math.imul((key % 0x100000000) ^ Math.imul(Math.floor(key / 0x100000000), 0x9e3779b1), 0x85ebca6b);
    let at = (h0 ^ (h0 >>> 15)) & this.mask;
    while (this.slotIds[at] !== 0) at = (at + 1) & this.mask;
    this.slotKeys[at] = key;
    this.slotIds[at] = id + 1;
  }

  private rebuild(): void {
    const size = this.slotIds.length * 4;
    this.slotKeys = new Float64Array(size);
    this.slotIds = new Int32Array(size);
    this.mask = size - 1;
    this.keys.forEach((key, id) => this.place(key, id));
  }
}
