/**
 * The in-memory directory's token rows (decisions 1136, 1137, 1164): for each row, a token and the entry
 * it belongs to, as parallel arrays, held in blocks of about 8,192 rows. A write
 * inserts or removes a row in one block: in arrays of all the rows (4,400,000 at 1,000,000 users) each
 * such move took 25-40 ms. Blocks are filled whole at build, split when one grows to twice the size,
 * dropped when emptied; their arrays are always of their exact size.
 */
const SHIFT = 13;

interface Block<E> {
  tokens: string[];
  entries: E[];
}

/** A copy of some rows: tokens and entries. */
export interface RowCopy<E> {
  tokens: string[];
  entries: E[];
}

export class TokenRows<E> {
  private blocks: Block<E>[] = [];
  /** Position of each block's first row; the last is the number of rows. */
  private starts: number[] = [0];
  /** Every block but the last is full (true until a write): a row's block is its position's high bits. */
  private uniform = true;
  /** The block last found (positions are often asked in runs). */
  private last = 0;

  private readonly block: number;

  /** `count` rows, each to be given by `set` (the build), in blocks of 2 ** `shift` rows. */
  constructor(
    count = 0,
    private readonly shift = SHIFT,
  ) {
    this.block = 1 << shift;
    for (let from = 0; from < count; from += this.block) {
      const size = Math.min(this.block, count - from);
      this.blocks.push({ tokens: new Array<string>(size), entries: new Array<E>(size) });
      this.starts.push(from + size);
    }
  }

  get length(): number {
    return this.starts[this.blocks.length]!;
  }

  /** The block holding row `i` (0 <= i < length). */
  private blockOf(i: number): number {
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

  token(i: number): string {
    const b = this.blockOf(i);
    return this.blocks[b]!.tokens[i - this.starts[b]!]!;
  }

  entry(i: number): E {
    const b = this.blockOf(i);
    return this.blocks[b]!.entries[i - this.starts[b]!]!;
  }

  set(i: number, token: string, entry: E): void {
    const b = this.blockOf(i);
    const block = this.blocks[b]!;
    const at = i - this.starts[b]!;
    block.tokens[at] = token;
    block.entries[at] = entry;
  }

  setToken(i: number, token: string): void {
    const b = this.blockOf(i);
    this.blocks[b]!.tokens[i - this.starts[b]!] = token;
  }

  /** The entries of rows [from, to). */
  entries(from: number, to: number): E[] {
    const out = new Array<E>(Math.max(0, to - from));
    this.spans(from, to, (block, lo, hi, at) => {
      const entries = block.entries;
      for (let k = lo; k < hi; k++) out[at + k - lo] = entries[k]!;
    });
    return out;
  }

  /** Rows [from, to), a copy. */
  copy(from: number, to: number): RowCopy<E> {
    const n = Math.max(0, to - from);
    const out: RowCopy<E> = { tokens: new Array<string>(n), entries: new Array<E>(n) };
    this.spans(from, to, (block, lo, hi, at) => {
      for (let k = lo; k < hi; k++) {
        out.tokens[at + k - lo] = block.tokens[k]!;
        out.entries[at + k - lo] = block.entries[k]!;
      }
    });
    return out;
  }

  /** Calls `fn` with each block's part of rows [from, to): its rows [lo, hi) there, the first's offset from `from`. */
  private spans(from: number, to: number, fn: (block: Block<E>, lo: number, hi: number, at: number) => void): void {
    for (let i = from; i < to;) {
      const b = this.blockOf(i);
      const start = this.starts[b]!;
      const end = Math.min(to, this.starts[b + 1]!);
      fn(this.blocks[b]!, i - start, end - start, i - from);
      i = end;
    }
  }

  /** Inserts a row at position `at` (0 <= at <= length). */
  insert(at: number, token: string, entry: E): void {
    if (!this.blocks.length) {
      this.blocks.push({ tokens: [token], entries: [entry] });
      this.starts.push(1);
      return;
    }
    const b = at === this.length ? this.blocks.length - 1 : this.blockOf(at);
    const block = this.blocks[b]!;
    const k = at - this.starts[b]!;
    const grown = {
      tokens: block.tokens.slice(0, k).concat(token, block.tokens.slice(k)),
      entries: block.entries.slice(0, k).concat([entry], block.entries.slice(k)),
    };
    for (let s = b + 1; s < this.starts.length; s++) this.starts[s]!++;
    this.uniform = false;
    if (grown.tokens.length < 2 * this.block) this.blocks[b] = grown;
    else {
      const half = grown.tokens.length >>> 1;
      const split = (from: number, to?: number) => ({
        tokens: grown.tokens.slice(from, to),
        entries: grown.entries.slice(from, to),
      });
      this.blocks.splice(b, 1, split(0, half), split(half));
      this.starts.splice(b + 1, 0, this.starts[b]! + half);
    }
  }

  /** Removes the row at position `at`. */
  remove(at: number): void {
    const b = this.blockOf(at);
    const block = this.blocks[b]!;
    const k = at - this.starts[b]!;
    if (block.tokens.length === 1) {
      this.blocks.splice(b, 1);
      this.starts.splice(b + 1, 1);
    } else {
      this.blocks[b] = {
        tokens: block.tokens.slice(0, k).concat(block.tokens.slice(k + 1)),
        entries: block.entries.slice(0, k).concat(block.entries.slice(k + 1)),
      };
    }
    for (let s = b + 1; s < this.starts.length; s++) this.starts[s]!--;
    this.uniform = false;
  }
}
