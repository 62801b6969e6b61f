import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths.js';

/**
 * Replaces the text between `<!-- latest -->` and `<!-- /latest -->` in docs/performance.md with the
 * table of a full run, so the document always shows the committed results.
 */
export function updatePerformanceDoc(table: string): boolean {
  const file = path.join(projectRoot, 'docs', 'performance.md');
  if (!existsSync(file)) return false;
  const doc = readFileSync(file, 'utf8');
  const start = doc.indexOf('<!-- latest -->');
  const end = doc.indexOf('<!-- /latest -->');
  if (start < 0 || end < start) return false;
  const body = table.replace(/^# .*\n\n/, '');
  writeFileSync(file, `${doc.slice(0, start)}<!-- latest -->\n${body.trim()}\n${doc.slice(end)}`);
  return true;
}
