import { BlockedRows, withRow, withoutRow } from './blocked-rows.js';

/**
 * The in-memory directory's token rows (decisions 1136, 1137, 1164): for each row, a token and the entry
 * it belongs to, as parallel arrays, held in blocks of about 8,192 rows (src/data/search/blocked-rows.ts).
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

export class TokenRows<E> extends BlockedRows<Block<E>, [string, E]> {
  /** `count` rows, each to be given by `set` (the build), in blocks of 2 ** `shift` rows. */
  constructor(count = 0, shift = SHIFT) {
    super(count, shift);
  }

  protected sized(size: number): Block<E> {
    return { tokens: new Array<string>(size), entries: new Array<E>(size) };
  }
  protected single([token, entry]: [string, E]): Block<E> {
    return { tokens: [token], entries: [entry] };
  }
  protected inserted(block: Block<E>, k: number, [token, entry]: [string, E]): Block<E> {
    return { tokens: withRow(block.tokens, k, token), entries: withRow(block.entries, k, entry) };
  }
  protected removed(block: Block<E>, k: number): Block<E> {
    return { tokens: withoutRow(block.tokens, k), entries: withoutRow(block.entries, k) };
  }
  protected sliced(block: Block<E>, from: number, to?: number): Block<E> {
    return { tokens: block.tokens.slice(from, to), entries: block.entries.slice(from, to) };
  }
  protected sizeOf(block: Block<E>): number {
    return block.tokens.length;
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

  /** The first of rows [from, to) that is (token, entry), or -1: block by block, no lookup per row. */
  indexOf(from: number, to: number, token: string, entry: E): number {
    let found = -1;
    this.spans(from, to, (block, lo, hi, at) => {
      if (found >= 0) return;
      const { tokens, entries } = block;
      for (let k = lo; k < hi; k++)
        if (entries[k] === entry && tokens[k] === token) {
          found = from + at + k - lo;
          return;
        }
    });
    return found;
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

  /** Inserts a row at position `at` (0 <= at <= length). */
  insert(at: number, token: string, entry: E): void {
    this.insertRow(at, [token, entry]);
  }
}
