import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageVersion } from './reference-assets.js';

/** Marker written last into a finished bundle directory: a directory without it is not used. */
const DONE = '.complete';

/**
 * Name of a bundle from everything that shapes it: the sources' names and text and the installed
 * versions of the packages it takes in, so that any change builds a new one beside the old.
 */
export function bundleKey(sources: string[], packages: string[]): string {
  const h = createHash('sha256');
  for (const f of sources) h.update(path.basename(f)).update(readFileSync(f));
  for (const name of packages) h.update(`${name}@${packageVersion(name)}\n`);
  return h.digest('hex').slice(0, 16);
}

/**
 * Returns `dir` once it holds a finished build, running `build` into a private temporary directory
 * first when it does not. Concurrent builders (two processes) each write their own directory and the
 * first rename wins; a half-written or failed build is never seen under `dir`.
 */
export async function buildOnce(dir: string, build: (outdir: string) => Promise<void>): Promise<string> {
  if (existsSync(path.join(dir, DONE))) return dir;
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    await build(tmp);
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

/**
 * The result of `start`, begun on first call and shared by every caller in this process; a failure
 * is not kept, so the next call tries again (a bundle that failed to build is not broken for good).
 */
export function onceUntilFailure<T>(start: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= start().catch((e: unknown) => {
      pending = undefined;
      throw e;
    });
    return pending;
  };
}
