/**
 * The index-friendly form of a contact's name (docs/decisions/211-contact-name-tokens.md): lower case,
 * NFD with combining marks removed, split into words on white space; each word keeps only its letters
 * and digits, and every part after a hyphen, apostrophe or other punctuation starts a token of its own
 * that runs to the end of the word. "Dr Zoë O'Neil-Smith" gives dr, zoe, oneilsmith, neilsmith, smith.
 * A search word matches a contact when it is a prefix of one of its tokens, which a multikey index
 * answers with index bounds (an anchored regex `^word`).
 */

/** Latin letters that have no decomposition, spelled as a reader without the key would type them. */
const LETTERS: Record<string, string> = {
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  ħ: 'h',
  ŧ: 't',
  ı: 'i',
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  þ: 'th',
};

/** Lower case, compatibility-decomposed, combining marks removed, undecomposable Latin letters spelled out. */
export function foldName(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[øđðłħŧıßæœþ]/gu, (c) => LETTERS[c]!);
}

/** Letters and digits only: what a token or a search word keeps of a folded word. */
const strip = (s: string) => s.replace(/[^\p{L}\p{N}]/gu, '');

/** Tokens of one folded word: the whole word, then each suffix starting after punctuation. */
function wordTokens(word: string, out: Set<string>): void {
  const parts = word.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  for (let i = 0; i < parts.length; i++) out.add(parts.slice(i).join(''));
}

/** The tokens stored in `nameTokens` for a display name and username (sorted, without duplicates). */
export function nameTokens(displayName: string, username?: string): string[] {
  const out = new Set<string>();
  for (const text of [displayName, username ?? '']) {
    for (const word of foldName(text).split(/\s+/u)) wordTokens(word, out);
  }
  return [...out].sort();
}

/** At most this many words of a search are used (the rest narrow nothing a person types). */
export const MAX_SEARCH_WORDS = 8;

/**
 * The words of a search: folded, split on white space, letters and digits only, empty ones dropped,
 * duplicates and words that prefix another word of the same search removed (they add no condition).
 * No word at all (only punctuation): the search filters nothing, as an empty one.
 */
export function searchWords(name: string | undefined): string[] {
  if (!name) return [];
  const words = [...new Set(foldName(name).split(/\s+/u).map(strip).filter(Boolean))];
  return words
    .filter((w) => !words.some((o) => o !== w && o.startsWith(w)))
    .sort()
    .slice(0, MAX_SEARCH_WORDS);
}

/** Whether every search word is a prefix of one of the tokens: the rule the database query applies. */
export function tokensMatch(words: readonly string[], tokens: readonly string[] | undefined | null): boolean {
  if (!words.length) return true;
  if (!tokens?.length) return false;
  return words.every((w) => tokens.some((t) => t.startsWith(w)));
}

/**
 * Whether `user` is among the users a name/alphabet search selects (no id conditions): the rule of the
 * repository's `searchFilter`, in memory. Kept beside the search words so the two cannot drift apart.
 */
export function matchesSearch(
  q: { name?: string; initial?: string },
  user: { status: string; initial: string; nameTokens?: readonly string[] | null },
): boolean {
  if (user.status !== 'active') return false;
  if (q.initial && user.initial !== q.initial) return false;
  return tokensMatch(searchWords(q.name), user.nameTokens);
}
