// `npm run build`: compiles src/ to JavaScript under dist/ (decision 830), the code that `npm start`,
// the image and production nodes run with plain `node`. Each TypeScript file becomes one ES module
// with the same path (src/http/app.ts -> dist/http/app.js), so paths a module computes from its own
// location (proto/ and .local/ two levels up, the browser scripts beside it) hold in both trees; every
// other file under src/ (the pages' browser scripts and stylesheets) is copied as it is. Tests stay in
// the sources. Types are not checked here: `npm run typecheck` does that, in CI.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { localDir, ServiceError, takeLock } from './services.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = path.join(root, 'src');
export const distDir = path.join(root, 'dist');
/** Written last into a finished build: the fingerprint of the inputs it was built from. */
const STAMP = '.build.json';
/** The oldest Node.js line the output runs on (engines in package.json; 20 is tolerated for development). */
const TARGET = 'node20';

const isTest = (f) => f.endsWith('.test.ts');

/** Files under `dir`, relative to it, sorted; tests left out. */
function sourceFiles(dir = srcDir, rel = '') {
  const out = [];
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(dir, r));
    else if (e.isFile() && !isTest(e.name)) out.push(r);
  }
  return out.sort();
}

/**
 * What the build depends on, cheaply: every source file's path, size and modification time, the
 * settings and this script, and the compiler's version. Any edit, addition, deletion or rename (or a
 * checkout that touches files) changes it; reading it stats a few hundred files (milliseconds).
 */
export function inputFingerprint() {
  const h = createHash('sha256');
  const files = sourceFiles().map((f) => path.join('src', f));
  for (const f of [...files, 'tsconfig.json', 'scripts/build.mjs']) {
    const s = statSync(path.join(root, f));
    h.update(`${f}\0${s.size}\0${s.mtimeMs}\n`);
  }
  const esbuildPkg = path.join(root, 'node_modules', 'esbuild', 'package.json');
  h.update(existsSync(esbuildPkg) ? JSON.parse(readFileSync(esbuildPkg, 'utf8')).version : 'none');
  return h.digest('hex');
}

/** True when dist/ holds a finished build of the current sources. */
export function isFresh(fingerprint = inputFingerprint()) {
  try {
    return JSON.parse(readFileSync(path.join(distDir, STAMP), 'utf8')).fingerprint === fingerprint;
  } catch {
    return false;
  }
}

function log(msg) {
  process.stderr.write(`[build] ${msg}\n`);
}

/**
 * Compiles into a private directory, then puts it in place of dist/: a failed or interrupted build
 * never leaves a half-written dist/ behind, and one that is running keeps the files it loaded.
 */
async function compile(fingerprint) {
  const { build } = await import('esbuild');
  const started = Date.now();
  const tmp = `${distDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const files = sourceFiles();
  const ts = files.filter((f) => f.endsWith('.ts'));
  try {
    await build({
      entryPoints: ts.map((f) => path.join(srcDir, f)),
      outdir: tmp,
      outbase: srcDir,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: TARGET,
      sourcemap: 'linked',
      tsconfig: path.join(root, 'tsconfig.json'),
      logLevel: 'warning',
    }).catch(() => {
      throw new ServiceError('compiling src/ failed (the errors are above)');
    });
    for (const f of files.filter((f) => !f.endsWith('.ts'))) {
      mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
      copyFileSync(path.join(srcDir, f), path.join(tmp, f));
    }
    writeFileSync(path.join(tmp, STAMP), JSON.stringify({ fingerprint, builtAt: new Date().toISOString() }) + '\n');
    const old = `${distDir}.old-${process.pid}`;
    if (existsSync(distDir)) renameSync(distDir, old);
    renameSync(tmp, distDir);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { modules: ts.length, assets: files.length - ts.length, ms: Date.now() - started };
}

/**
 * Builds dist/ unless it already holds a build of the current sources (`force` builds anyway).
 * Concurrent callers (a start and a test run) wait for the one building. Resolves to what was done.
 */
export async function ensureBuilt({ force = false } = {}) {
  const before = inputFingerprint();
  if (!force && isFresh(before)) return { built: false };
  mkdirSync(localDir, { recursive: true });
  const release = await takeLock(path.join(localDir, 'build.lock'), 'compiling src/ into dist/');
  try {
    const fingerprint = inputFingerprint();
    if (!force && isFresh(fingerprint)) return { built: false };
    return { built: true, ...(await compile(fingerprint)) };
  } finally {
    release();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const r = await ensureBuilt({ force: !process.argv.includes('--if-stale') }).catch((e) => {
    if (!(e instanceof ServiceError)) throw e;
    log(e.message);
    process.exit(1);
  });
  log(r.built ? `${r.modules} modules and ${r.assets} other files into dist/ in ${r.ms} ms` : 'dist/ is up to date');
}
