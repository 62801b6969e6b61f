import path from 'node:path';
import { BROWSER_DIR, packageDir } from './reference-assets.js';
import { buildOnce, bundleKey, onceUntilFailure } from './bundle-cache.js';

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

/** Where bundles are kept: node_modules/.cache, the conventional place for derived build output. */
export function explorerCacheRoot(): string {
  return path.join(packageDir('graphiql'), '..', '.cache', 'graphiql-explorer');
}

/**
 * Bundles GraphiQL, React and Monaco (with its editor, JSON and GraphQL workers) from the installed
 * packages with esbuild, once per input set, and returns the directory of the files to serve.
 */
export async function buildExplorer(root = explorerCacheRoot()): Promise<string> {
  return buildOnce(path.join(root, bundleKey([ENTRY], INPUTS)), async (outdir) => {
    const { build } = await import('esbuild');
    const common = {
      bundle: true,
      minify: true,
      platform: 'browser',
      target: 'es2022',
      outdir,
      logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
      legalComments: 'none',
    } as const;
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
  });
}

/** The bundle directory, built on first use in this process (a failed build is retried next time). */
export const explorerBundle = onceUntilFailure(() => buildExplorer());
