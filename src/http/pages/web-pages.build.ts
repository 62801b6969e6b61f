import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageDir, packageVersion } from '../reference/reference-assets.js';

/** Sources of the pages' scripts and stylesheet (plain browser JavaScript, bundled as they are). */
export const PAGES_BROWSER_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'browser');
const ENTRIES = { signin: 'signin.entry.js', approve: 'approve.entry.js' };
/** Packages whose versions (with the sources' text) name a bundle. */
const INPUTS = ['oauth4webapi', 'esbuild'];
const DONE = '.complete';

function bundleKey(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(PAGES_BROWSER_DIR).sort())
    h.update(f).update(readFileSync(path.join(PAGES_BROWSER_DIR, f)));
  for (const name of INPUTS) h.update(`${name}@${packageVersion(name)}\n`);
  return h.digest('hex').slice(0, 16);
}

/**
 * Bundles the sign-in callback's and the approval page's scripts (with oauth4webapi) with esbuild, once
 * per input set, under node_modules/.cache, and returns the directory of the files to serve. Concurrent
 * builders each write a private directory; the first rename wins.
 */
export async function buildWebPages(
  root = path.join(packageDir('oauth4webapi'), '..', '.cache', 'web-pages'),
): Promise<string> {
  const dir = path.join(root, bundleKey());
  if (existsSync(path.join(dir, DONE))) return dir;
  const { build } = await import('esbuild');
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    await build({
      entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([k, f]) => [k, path.join(PAGES_BROWSER_DIR, f)])),
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      outdir: tmp,
      logLevel: 'silent',
      legalComments: 'none',
      absWorkingDir: packageDir('oauth4webapi'),
    });
    copyFileSync(path.join(PAGES_BROWSER_DIR, 'pages.css'), path.join(tmp, 'pages.css'));
    writeFileSync(path.join(tmp, DONE), new Date().toISOString());
    try {
      renameSync(tmp, dir);
    } catch (e) {
      if (!existsSync(path.join(dir, DONE))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

let pending: Promise<string> | undefined;

/** The bundle directory, built on first use in this process (a failed build is retried next time). */
export function webPagesBundle(): Promise<string> {
  pending ??= buildWebPages().catch((e: unknown) => {
    pending = undefined;
    throw e;
  });
  return pending;
}
