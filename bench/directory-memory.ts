/**
 * The in-memory contact directory's memory per user, build time and search time at a tenant's size
 * (issue 39, B6 at 1,000,000 users; decision 1136). Not a harness benchmark: one process, no server.
 *
 *   node --expose-gc --import tsx bench/directory-memory.ts [count ...]   (default: 100000 1000000)
 *
 * Users are synthetic but shaped as the product stores them: display names of 2-3 words made of
 * varied syllables (first names from a pool of 3,000, surnames from 200,000, drawn with a skew; some
 * titles, hyphens, apostrophes and accents), `sortName`/`initial`/`nameTokens` from the product's own
 * `sortKeys` (name-tokens.ts) over the display name and a `first.last<n>` username. Each user's fields
 * go through BSON (serialized, then deserialized as the driver decodes a cursor batch, so every string
 * and ObjectId is a value of its own, as on a load), then through the directory's `toEntry`.
 *
 * Memory is V8's `heapUsed` plus `arrayBuffers` (typed arrays live outside the heap) after a full GC:
 * - entries: the list of `toEntry` results (the BSON documents freed), over the empty baseline;
 * - index: what `DirectoryIndex.build` holds with the entries list freed (the entries are inside it);
 * - searched: the same after the searches below (their lazily built positions and kept range orders).
 * Build time is `DirectoryIndex.build` alone (the load from the database is not in it), with its phases
 * and the longest turn of the event loop during it (the build runs in slices). Searches: the first run
 * of each (cold: it sorts the token bucket a word longer than three units needs, in slices, as the
 * contact directory does, and builds the positions) and the median of 20 runs (warm), page and count.
 * Then one write (a user renamed), the first search after it (kept range orders are dropped on a
 * change) and the memory after it (arrays a write grows keep room).
 */
import { BSON, ObjectId } from 'bson';
import { sortKeys } from '../src/data/models/user.model.js';
import type { DirectoryFields } from '../src/data/repositories/user.repository.js';
import { toEntry } from '../src/data/search/contact-directory.js';
import { DirectoryIndex } from '../src/data/search/directory-index.js';
import type { DirectoryEntry } from '../src/data/search/directory-entry.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/** Deterministic generator (mulberry32): the same users on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = (
  'an ba be bo ca ce da de di do el em en fa fe fi ga ge gi ha he hi ia in jo ka ke ki ko la le li lo lu ' +
  'ma me mi mo mu na ne ni no nu ol or pa pe pi ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo ' +
  'wa we xa ya yo za ze zo ber dor gan kin lan mar nor ric son ter tin van wen zel'
).split(' ');
const ACCENTED: Record<string, string> = { e: 'é', o: 'ö', a: 'å', u: 'ü', i: 'ï' };

function word(rnd: () => number, min: number, max: number): string {
  const n = min + Math.floor(rnd() * (max - min + 1));
  let w = '';
  for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)];
  if (rnd() < 0.05) w = w.replace(/[aeiou]/, (c) => ACCENTED[c]!);
  return w.charAt(0).toUpperCase() + w.slice(1);
}

function pool(rnd: () => number, size: number, min: number, max: number): string[] {
  return Array.from({ length: size }, () => word(rnd, min, max));
}

/** A skewed draw: low indexes (common names) far more often than high ones. */
const skewed = <T>(rnd: () => number, from: readonly T[]): T => from[Math.floor(from.length * rnd() ** 2)]!;

/** The directory fields of `count` users as the cursor yields them (decoded from BSON one by one). */
function* users(count: number): Generator<DirectoryFields> {
  const rnd = random(39);
  const firsts = pool(rnd, 3000, 2, 3);
  const lasts = pool(rnd, 200_000, 2, 4);
  for (let i = 0; i < count; i++) {
    const first = skewed(rnd, firsts);
    let last = skewed(rnd, lasts);
    const r = rnd();
    if (r < 0.05) last = `${last}-${skewed(rnd, lasts)}`;
    else if (r < 0.08) last = `O'${last}`;
    const middle = rnd() < 0.3 ? ` ${skewed(rnd, firsts)}` : '';
    const title = rnd() < 0.05 ? 'Dr ' : '';
    const displayName = `${title}${first}${middle} ${last}`;
    const username = `${first}.${last.replace(/[^A-Za-z]/g, '')}${i}`.toLowerCase();
    const doc = {
      _id: new ObjectId(),
      ...sortKeys(displayName, username),
      role: rnd() < 0.1 ? 'clinician' : 'patient',
      kind: rnd() < 0.02 ? 'device' : 'person',
    };
    yield BSON.deserialize(BSON.serialize(doc)) as DirectoryFields;
  }
}

interface Mem {
  heap: number;
  buffers: number;
}
function memory(): Mem {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
}
const perUser = (a: Mem, b: Mem, n: number) =>
  `${Math.round((b.heap + b.buffers - a.heap - a.buffers) / n)} B/user (heap ${Math.round((b.heap - a.heap) / n)}, array buffers ${Math.round((b.buffers - a.buffers) / n)})`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const ms = (x: number) => `${x.toFixed(x < 1 ? 3 : 1)} ms`;

/** The searches of B6's mix (a letter, a name prefix, two words, deep pages, the whole list). */
const SEARCHES: { label: string; name?: string; skip: number }[] = [
  { label: "'' skip 1000", name: '', skip: 1000 },
  { label: "'a' skip 0", name: 'a', skip: 0 },
  { label: "'ma' skip 200", name: 'ma', skip: 200 },
  { label: "'berlan' skip 0", name: 'berlan', skip: 0 },
  { label: "'ka ri' skip 20", name: 'ka ri', skip: 20 },
  { label: "'lanbe' skip 0", name: 'lanbe', skip: 0 },
];

async function run(count: number): Promise<void> {
  const base = memory();
  const started = performance.now();
  let entries: DirectoryEntry[] | undefined = [];
  for (const u of users(count)) entries.push(toEntry(u));
  const generatedMs = performance.now() - started;
  const withEntries = memory();
  const phases: string[] = [];
  let longestTurn = 0;
  let building = true;
  let turnStart = performance.now();
  const observe = () => {
    if (!building) return;
    const now = performance.now();
    longestTurn = Math.max(longestTurn, now - turnStart);
    turnStart = now;
    setImmediate(observe);
  };
  setImmediate(observe);
  const t0 = performance.now();
  const index = await DirectoryIndex.build('code-unit', entries, (phase, took) =>
    phases.push(`${phase} ${(took / 1000).toFixed(2)} s`),
  );
  const buildMs = performance.now() - t0;
  longestTurn = Math.max(longestTurn, performance.now() - turnStart);
  building = false;
  const someone = entries[count >> 1]!;
  entries = undefined;
  const built = memory();
  const rows: string[] = [];
  for (const s of SEARCHES) {
    const q = { name: s.name, skip: s.skip, take: 20 };
    const c0 = performance.now();
    await index.prepare(q);
    const total = index.count(q);
    const page = index.search(q);
    const cold = performance.now() - c0;
    const pageMs: number[] = [];
    const countMs: number[] = [];
    for (let i = 0; i < 20; i++) {
      const a = performance.now();
      index.search(q);
      const b = performance.now();
      index.count(q);
      pageMs.push(b - a);
      countMs.push(performance.now() - b);
    }
    rows.push(
      `  ${s.label.padEnd(18)} ${String(total).padStart(8)} found, page of ${page.length}: ` +
        `cold ${ms(cold)}, warm page ${ms(median(pageMs))}, count ${ms(median(countMs))}`,
    );
  }
  const searched = memory();
  const w0 = performance.now();
  index.upsert({ ...someone, sortName: `ma ${someone.sortName}`, nameTokens: ['ma', ...someone.nameTokens], rank: -1 });
  const w1 = performance.now();
  const afterWrite = { name: 'ma', skip: 200, take: 20 };
  index.count(afterWrite);
  index.search(afterWrite);
  const w2 = performance.now();
  const written = memory();
  console.log(`${count.toLocaleString('en')} users (generated and decoded in ${(generatedMs / 1000).toFixed(1)} s)`);
  console.log(`  entries (toEntry list):  ${perUser(base, withEntries, count)}`);
  console.log(`  index (entries inside):  ${perUser(base, built, count)}`);
  console.log(`  index after searches:    ${perUser(base, searched, count)}`);
  console.log(`  index after a write:     ${perUser(base, written, count)}`);
  console.log(`  build: ${(buildMs / 1000).toFixed(2)} s (DirectoryIndex.build): ${phases.join(', ')}`);
  console.log(`  longest event loop turn during the build: ${ms(longestTurn)}`);
  console.log(rows.join('\n'));
  console.log(`  a user renamed: ${ms(w1 - w0)}; then 'ma' skip 200, count and page: ${ms(w2 - w1)}`);
  if (index.size !== count) throw new Error(`index holds ${index.size} of ${count}`);
}

const counts = process.argv.slice(2).map(Number);
for (const n of counts.length ? counts : [100_000, 1_000_000]) await run(n);
