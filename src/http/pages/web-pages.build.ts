import { copyFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageDir } from '../reference/reference-assets.js';
import { buildOnce, bundleKey, onceUntilFailure } from '../reference/bundle-cache.js';

/** Sources of the pages' scripts and stylesheet (plain browser JavaScript, bundled as they are). */
export const PAGES_BROWSER_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'browser');
const ENTRIES = { signin: 'signin.entry.js', approve: 'approve.entry.js' };
/** Packages whose versions (with the sources' text) name a bundle. */
const INPUTS = ['oauth4webapi', 'esbuild'];

/**
 * Bundles the sign-in callback's and the approval page's scripts (with oauth4webapi) with esbuild, once
 * per input set, under node_modules/.cache, and returns the directory of the files to serve.
 */
export async function buildWebPages(
  root = path.join(packageDir('oauth4webapi'), '..', '.cache', 'web-pages'),
): Promise<string> {
  const sources = readdirSync(PAGES_BROWSER_DIR)
    .sort()
    .map((f) => path.join(PAGES_BROWSER_DIR, f));
  return buildOnce(path.join(root, bundleKey(sources, INPUTS)), async (outdir) => {
    const { build } = await import('esbuild');
    await build({
      entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([k, f]) => [k, path.join(PAGES_BROWSER_DIR, f)])),
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      outdir,
      logLevel: 'silent',
      legalComments: 'none',
      absWorkingDir: packageDir('oauth4webapi'),
    });
    copyFileSync(path.join(PAGES_BROWSER_DIR, 'pages.css'), path.join(outdir, 'pages.css'));
  });
}

/** The bundle directory, built on first use in this process (a failed build is retried next time). */
export const webPagesBundle = onceUntilFailure(() => buildWebPages());
