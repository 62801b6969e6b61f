import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BROWSER_DIR, packageDir, packageVersion } from './reference-assets.js';

const ENTRY = path.join(BROWSER_DIR, 'graphiql.entry.js');
/** Packages whose versions (with the entry's text) name a bundle: any change builds a new one. */
const INPUTS = [
  'graphiql',
  '@graphiql/react',
  '@graphiql/toolkit',
  'monaco-editor',
  'monaco-graphql',
  'react',
  'react-dom',
  'esbuild',
];
const DONE = '.complete';

/** Where bundles are kept: node_modules/.cache, the conventional place for derived build output. */
export function explorerCacheRoot(): string {
  return path.join(packageDir('graphiql'), '..', '.cache', 'graphiql-explorer');
}

function bundleKey(): string {
  const h = createHash('sha256').update(readFileSync(ENTRY));
  for (const name of INPUTS) h.update(`${name}@${packageVersion(name)}\n`);
  return h.digest('hex').slice(0, 16);
}

/**
 * Bundles GraphiQL, React and Monaco (with its editor, JSON and GraphQL workers) from the installed
 * packages with esbuild, once per input set, and returns the directory of the files to serve.
 * Concurrent builders (two processes) each write a private directory; the first rename wins.
 */
export async function buildExplorer(root = explorerCacheRoot()): Promise<string> {
  const dir = path.join(root, bundleKey());
  if (existsSync(path.join(dir, DONE))) return dir;
  const { build } = await import('esbuild');
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  const common = {
    bundle: true,
    minify: true,
    platform: 'browser',
    target: 'es2022',
    outdir: tmp,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
  } as const;
  try {
    await build({
      ...common,
      entryPoints: { graphiql: ENTRY },
      format: 'esm',
      loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file', '.svg': 'dataurl' },
      assetNames: '[name]-[hash]',
    });
    // Classic workers, one file each, so they start without module-worker support.
    await build({
      ...common,
      format: 'iife',
      entryPoints: {
        'editor.worker': 'monaco-editor/esm/vs/editor/editor.worker.js',
        'json.worker': 'monaco-editor/esm/vs/language/json/json.worker.js',
        'graphql.worker': 'monaco-graphql/esm/graphql.worker.js',
      },
      absWorkingDir: packageDir('graphiql'),
    });
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
export function explorerBundle(): Promise<string> {
  pending ??= buildExplorer().catch((e: unknown) => {
    pending = undefined;
    throw e;
  });
  return pending;
}
