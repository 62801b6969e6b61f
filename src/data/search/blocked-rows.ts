/**
 * Rows in order, held in blocks of about 2 ** shift rows (decision 1137): a write inserts or removes a
 * row in one block, where one array of all the rows (4,400,000 token rows, or 1,000,000 entries, at
 * 1,000,000 users) moved them all, 1.5-40 ms a move. Blocks are filled whole at build, split when one
 * grows to twice the size, dropped when emptied; their arrays are always of their exact size. A subclass
 * says what a block is (one array, or parallel arrays) and how a row goes in and out of one.
 */
export abstract class BlockedRows<B, R> {
  protected blocks: B[] = [];
  /** Position of each block's first row; the last is the number of rows. */
  protected starts: number[] = [0];
  /** Every block but the last is full (true until a write): a row's block is its position's high bits. */
  private uniform = true;
  /** The block last found (positions are often asked in runs). */
  private last = 0;
  private readonly block: number;

  /** `count` rows in blocks of 2 ** `shift`, made by `sized` (the build fills them). */
  constructor(
    count: number,
    private readonly shift: number,
  ) {
    this.block = 1 << shift;
    for (let from = 0; from < count; from += this.block) {
      const size = Math.min(this.block, count - from);
      this.blocks.push(this.sized(size));
      this.starts.push(from + size);
    }
  }

  /** A block of `size` rows to be filled. */
  protected abstract sized(size: number): B;
  /** A block of this one row. */
  protected abstract single(row: R): B;
  /** The block with `row` inserted at `k`, and the block's rows [from, to) (new blocks each). */
  protected abstract inserted(block: B, k: number, row: R): B;
  protected abstract removed(block: B, k: number): B;
  protected abstract sliced(block: B, from: number, to?: number): B;
  protected abstract sizeOf(block: B): number;

  get length(): number {
    return this.starts[this.blocks.length]!;
  }

  /** The block holding row `i` (0 <= i < length). */
  protected blockOf(i: number): number {
    if (this.uniform) return i >>> this.shift;
    const starts = this.starts;
    let b = this.last;
    if (b < this.blocks.length && starts[b]! <= i && i < starts[b + 1]!) return b;
    let lo = 0;
    let hi = this.blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= i) lo = mid;
      else hi = mid - 1;
    }
    this.last = b = lo;
    return b;
  }

  /** Calls `fn` with each block's part of rows [from, to): its rows [lo, hi) there, the first's offset from `from`. */
  protected spans(from: number, to: number, fn: (block: B, lo: number, hi: number, at: number) => void): void {
    for (let i = from; i < to;) {
      const b = this.blockOf(i);
      const start = this.starts[b]!;
      const end = Math.min(to, this.starts[b + 1]!);
      fn(this.blocks[b]!, i - start, end - start, i - from);
      i = end;
    }
  }

  /** Inserts a row at position `at` (0 <= at <= length). */
  insertRow(at: number, row: R): void {
    if (!this.blocks.length) {
      this.blocks.push(this.single(row));
      this.starts.push(1);
      return;
    }
    const b = at === this.length ? this.blocks.length - 1 : this.blockOf(at);
    const grown = this.inserted(this.blocks[b]!, at - this.starts[b]!, row);
    for (let s = b + 1; s < this.starts.length; s++) this.starts[s]!++;
    this.uniform = false;
    const size = this.sizeOf(grown);
    if (size < 2 * this.block) this.blocks[b] = grown;
    else {
      const half = size >>> 1;
      this.blocks.splice(b, 1, this.sliced(grown, 0, half), this.sliced(grown, half));
      this.starts.splice(b + 1, 0, this.starts[b]! + half);
    }
  }

  /** Removes the row at position `at`. */
  remove(at: number): void {
    const b = this.blockOf(at);
    const block = this.blocks[b]!;
    if (this.sizeOf(block) === 1) {
      this.blocks.splice(b, 1);
      this.starts.splice(b + 1, 1);
    } else this.blocks[b] = this.removed(block, at - this.starts[b]!);
    for (let s = b + 1; s < this.starts.length; s++) this.starts[s]!--;
    this.uniform = false;
  }
}

/** One array with `row` inserted at `k` (a new array). */
export const withRow = <T>(a: readonly T[], k: number, row: T): T[] => a.slice(0, k).concat([row], a.slice(k));
/** One array with its row at `k` taken out (a new array). */
export const withoutRow = <T>(a: readonly T[], k: number): T[] => a.slice(0, k).concat(a.slice(k + 1));

/**
 * Items in order, held in blocks: the in-memory directory's ordered entries (decision 1166), where one
 * array of 1,000,000 entries took about 1.5 ms a splice, twice a write.
 */
export class BlockedList<T> extends BlockedRows<T[], T> {
  /** The items of `items` in this order (a copy in blocks), in blocks of 2 ** `shift`. */
  constructor(items: readonly T[] = [], shift = 13) {
    super(items.length, shift);
    let i = 0;
    for (const block of this.blocks) for (let k = 0; k < block.length; k++) block[k] = items[i++]!;
  }

  protected sized(size: number): T[] {
    return new Array<T>(size);
  }
  protected single(row: T): T[] {
    return [row];
  }
  protected inserted(block: T[], k: number, row: T): T[] {
    return withRow(block, k, row);
  }
  protected removed(block: T[], k: number): T[] {
    return withoutRow(block, k);
  }
  protected sliced(block: T[], from: number, to?: number): T[] {
    return block.slice(from, to);
  }
  protected sizeOf(block: T[]): number {
    return block.length;
  }

  get(i: number): T {
    const b = this.blockOf(i);
    return this.blocks[b]![i - this.starts[b]!]!;
  }

  insert(at: number, item: T): void {
    this.insertRow(at, item);
  }

  /** Calls `fn` with the items in order until it answers false. */
  visit(fn: (item: T) => boolean): void {
    for (const block of this.blocks) for (let j = 0; j < block.length; j++) if (!fn(block[j]!)) return;
  }
}
