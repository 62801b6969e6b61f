// `npm run structure`: figures of the folder structure of src/ (docs/architecture.md "Layers"), from
// dependency-cruiser's JSON output (tests excluded, type-only imports included):
// - folder pairs importing each other: unordered pairs of src/ folders where each imports the other;
// - imports pointing back up the layers: ordered folder pairs (a imports b) where b's layer is above a's.
// A folder is a directory directly under src/; the files directly in src/ (the process entry, main.ts) count
// as one folder, `(root)`. `--list` prints the pairs and the file imports behind each. Exits 1 when a folder
// has no layer below, so a new folder gets one.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The layers, bottom first (docs/architecture.md "Layers"); folders in one layer are peers. */
const LAYERS = [
  ['kernel'],
  ['contracts'],
  ['config'],
  ['observability'],
  ['data', 'storage', 'spreadsheet', 'qr'],
  ['vcs'],
  ['realtime'],
  ['auth'],
  ['core'],
  ['actors'],
  ['edge'],
  ['app'],
  ['http', 'hub', 'telemetry', 'workers', 'idp'],
  ['composition', 'cli', '(root)'],
  ['operations'],
];
const rank = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i])));

function folderOf(file) {
  const parts = file.split('/');
  if (parts[0] !== 'src') return undefined;
  return parts.length === 2 ? '(root)' : parts[1];
}

const json = execFileSync(
  process.execPath,
  [
    path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
    'src',
    '--config',
    '.dependency-cruiser.cjs',
    '--output-type',
    'json',
  ],
  { cwd: root, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
);
const { modules } = JSON.parse(json);

/** "a>b" -> the file imports behind it. */
const edges = new Map();
for (const m of modules) {
  const from = folderOf(m.source);
  if (!from) continue;
  for (const d of m.dependencies) {
    const to = folderOf(d.resolved);
    if (!to || to === from) continue;
    const key = `${from}>${to}`;
    if (!edges.has(key)) edges.set(key, []);
    edges.get(key).push(`${m.source} -> ${d.resolved}${d.dependencyTypes.includes('type-only') ? ' (type)' : ''}`);
  }
}

const unranked = [...new Set([...edges.keys()].flatMap((k) => k.split('>')))].filter((f) => !rank.has(f));
const mutual = [...edges.keys()]
  .map((k) => k.split('>'))
  .filter(([a, b]) => a < b && edges.has(`${b}>${a}`))
  .map(([a, b]) => [a, b]);
const upward = [...edges.keys()]
  .map((k) => k.split('>'))
  .filter(([a, b]) => rank.has(a) && rank.has(b) && rank.get(b) > rank.get(a));

const list = process.argv.includes('--list');
const files = (a, b) => edges.get(`${a}>${b}`);
/**
 * The same figure without the pairs of the composition (src/composition and the entry: they wire every layer,
 * and the roles take the composition's types).
 */
const beyondRoot = (pairs) => pairs.filter((p) => !p.includes('(root)') && !p.includes('composition')).length;
console.log(
  `folder pairs importing each other: ${mutual.length} (${beyondRoot(mutual)} without (root) and composition)`,
);
for (const [a, b] of mutual) {
  console.log(`  ${a} <-> ${b} (${files(a, b).length} / ${files(b, a).length} file imports)`);
  if (list) for (const f of [...files(a, b), ...files(b, a)]) console.log(`      ${f}`);
}
const upwardFiles = upward.reduce((n, [a, b]) => n + files(a, b).length, 0);
console.log(
  `imports pointing back up the layers: ${upward.length} (${beyondRoot(upward)} without (root) and composition; ${upwardFiles} file imports)`,
);
for (const [a, b] of upward) {
  console.log(`  ${a} -> ${b} (${files(a, b).length} file imports)`);
  if (list) for (const f of files(a, b)) console.log(`      ${f}`);
}
if (unranked.length) {
  console.error(`folders without a layer (add them to LAYERS in scripts/structure-report.mjs): ${unranked.join(', ')}`);
  process.exitCode = 1;
}

/**
 * Issue 38's bounds, checked here so a change that passes them is refused by CI (`npm run structure` runs
 * in .ci/run): folder pairs importing each other, imports pointing back up the layers, no source file
 * (tests aside) over MAX_LINES outside the declarative tables named in DECLARATIVE, and no capability
 * folder (each folder of src/core, and the meeting actor's) over MAX_CAPABILITY_FILES source files
 * (decision 1176).
 */
const MAX_MUTUAL = 2;
const MAX_UPWARD = 5;
const MAX_LINES = 400;
const MAX_CAPABILITY_FILES = 15;
/** Files that are tables, not code: the GraphQL SDL and the resolver types generated from it. */
const DECLARATIVE = new Set(['src/http/graphql/schema.ts', 'src/http/graphql/generated/types.ts']);

const long = modules
  .map((m) => m.source)
  .filter((f) => f.startsWith('src/') && f.endsWith('.ts') && !f.endsWith('.test.ts') && !DECLARATIVE.has(f))
  .map((f) => [f, readFileSync(path.join(root, f), 'utf8').split('\n').length - 1])
  .filter(([, lines]) => lines > MAX_LINES)
  .sort((a, b) => b[1] - a[1]);
console.log(`source files over ${MAX_LINES} lines (declarative tables aside): ${long.length}`);
for (const [f, lines] of long) console.log(`  ${f}: ${lines}`);
const capabilities = [
  ...readdirSync(path.join(root, 'src/core'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `src/core/${d.name}`),
  'src/actors/meeting',
].map((dir) => [
  dir,
  readdirSync(path.join(root, dir)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).length,
]);
const crowded = capabilities.filter(([, files]) => files > MAX_CAPABILITY_FILES);
console.log(
  `capability folders: ${capabilities.length}, the largest ${Math.max(...capabilities.map(([, n]) => n))} source files (at most ${MAX_CAPABILITY_FILES})`,
);
for (const [dir, files] of crowded) console.log(`  ${dir}: ${files}`);
const over = [
  mutual.length > MAX_MUTUAL && `folder pairs importing each other ${mutual.length} > ${MAX_MUTUAL}`,
  upward.length > MAX_UPWARD && `imports pointing back up the layers ${upward.length} > ${MAX_UPWARD}`,
  long.length > 0 && `${long.length} source file(s) over ${MAX_LINES} lines: split them by what they do`,
  crowded.length > 0 && `${crowded.length} capability folder(s) over ${MAX_CAPABILITY_FILES} source files`,
].filter(Boolean);
if (over.length) {
  console.error(`structure bounds exceeded: ${over.join('; ')}`);
  process.exitCode = 1;
}
