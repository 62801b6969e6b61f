import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.local/resilience-results.json');

/**
 * Remembers a scenario's latest measured outcome (ignored by git, under .local/) so docs/reliability.md
 * can be refreshed from real runs rather than from memory.
 */
export function recordResult(scenario: string, result: Record<string, unknown>): void {
  mkdirSync(path.dirname(file), { recursive: true });
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    all = {};
  }
  all[scenario] = { ...result, at: new Date().toISOString(), soak: process.env.SOAK === '1' };
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
}

/** Appends a timestamped progress line to .local/resilience-trace.log (what a long run was doing when it failed). */
export function trace(line: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  appendFileSync(path.join(path.dirname(file), 'resilience-trace.log'), `${new Date().toISOString()} ${line}\n`);
}
