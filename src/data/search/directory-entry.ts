import type { UserSearch } from '../repositories/user.repository.js';

/**
 * What the in-memory directory keeps of an active user: enough to select, order and count. Compact
 * (decision 1136): the id as its 24 hex digits (ObjectIds are made for a returned page only), role,
 * kind and initial shared (`sharedString`), the tokens one copy per distinct token once indexed.
 */
export interface DirectoryEntry {
  /** The user's `_id`, 24 lower-case hex digits (ordered as the ObjectId's bytes). */
  id: string;
  sortName: string;
  initial: string;
  nameTokens: string[];
  role: string;
  kind: string;
  /** Order label: orders as the index's entries do, kept by the index (give -1; decision 1164). */
  rank: number;
}

/** Values kept once however many users carry them; beyond this many distinct ones, each keeps its own. */
const SHARED_MAX = 4096;
const shared = new Map<string, string>();

/** One copy of a short value many users repeat (role, kind, initial): about 32 bytes a user each, else. */
export function sharedString(s: string): string {
  const kept = shared.get(s);
  if (kept !== undefined) return kept;
  if (shared.size < SHARED_MAX) shared.set(s, s);
  return s;
}

export type DirectoryQuery = Omit<UserSearch, 'sort'>;
export type StringOrder = 'code-point' | 'code-unit';
