import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler } from 'express';

const require = createRequire(import.meta.url);

/** Browser scripts of the reference pages that the service writes itself (plain JS, served as files). */
export const BROWSER_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'browser');

/** Directory of an installed package (its package.json's folder), wherever npm hoisted it. */
export function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

/** Installed version of a package, for cache keys. */
export function packageVersion(name: string): string {
  return (require(`${name}/package.json`) as { version: string }).version;
}

/**
 * Only the named files of a package directory (not its demo pages or source maps), cached for an hour:
 * the names carry no hash, so an upgrade reaches browsers within that hour.
 */
export function packageFiles(dir: string, files: string[]): RequestHandler {
  const allowed = new Set(files);
  return (req, res, next) => {
    const name = req.path.slice(1);
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (!allowed.has(name)) return next();
    res.sendFile(name, { root: dir, maxAge: '1h' }, (err) => err && next(err));
  };
}

/** Every file of a build output directory, no listing, no index, cached for an hour. */
export function staticAssets(dir: string): RequestHandler {
  return express.static(dir, { index: false, redirect: false, fallthrough: true, maxAge: '1h' });
}
