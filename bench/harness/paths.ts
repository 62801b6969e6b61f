import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bench/ directory and the project root, wherever the harness is started from. */
export const benchRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const projectRoot = path.resolve(benchRoot, '..');
