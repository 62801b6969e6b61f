import { createRequire } from 'node:module';

/** The Node.js lines the service supports, from `engines.node` in package.json (e.g. `^22.15.0 || ^24.11.0`). */
export function supportedLines(engines: string): { major: number; from: string }[] {
  return engines.split('||').flatMap((range) => {
    const m = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(range);
    return m ? [{ major: Number(m[1]), from: `${m[1]}.${m[2]}.${m[3]}` }] : [];
  });
}

function olderThan(a: string, b: string): boolean {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] < y[i];
  return false;
}

/**
 * Why `version` (process.version) is not a supported Node.js release, or undefined when it is. The
 * service still runs on it (Node 20 stays usable for development, decision 831); production should not.
 */
export function unsupportedNodeNote(version: string, engines: string): string | undefined {
  const v = version.replace(/^v/, '');
  const lines = supportedLines(engines);
  const line = lines.find((l) => l.major === Number(v.split('.')[0]));
  if (line && !olderThan(v, line.from)) return undefined;
  const list = lines.map((l) => `${l.major} (from ${l.from})`).join(', ');
  return `Node.js ${v} is not a supported release: production runs on ${list} (package.json engines, decision 831)`;
}

/** `engines.node` of the service's package.json (one level above src/ and dist/ alike). */
export function packageEngines(): string {
  return (createRequire(import.meta.url)('../../package.json') as { engines?: { node?: string } }).engines?.node ?? '';
}
