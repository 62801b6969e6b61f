/**
 * `node --import tsx bench/harness/profile-summary.ts <file.cpuprofile> [top]`: prints the frames
 * with the most self time (and their share) from a V8 CPU profile written by `--cpu-prof`, as a
 * markdown table for docs/performance.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function frameName(n: ProfileNode): string {
  const f = n.callFrame;
  const where = f.url
    ? `${f.url
        .replace(/^file:\/\//, '')
        .replace(/^.*\/node_modules\//, 'node_modules/')
        .replace(/^.*\/(src|bench)\//, '$1/')}:${f.lineNumber + 1}`
    : '';
  return `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
}

export function summarise(file: string, top = 15): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    const name = frameName(byId.get(id)!);
    self.set(name, (self.get(name) ?? 0) + dt);
  });
  const idle = self.get('(idle)') ?? 0;
  const busy = Math.max(1, total - idle);
  const rows = [...self.entries()]
    .filter(([n]) => n !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
  const lines = [
    `Profile ${path.basename(file)}: ${(total / 1e6).toFixed(1)} s sampled, ${((100 * idle) / total).toFixed(1)}% idle, ${(busy / 1e6).toFixed(1)} s on the CPU`,
    '',
    '| Self time | Share of CPU time | Frame |',
    '|---|---|---|',
  ];
  for (const [name, t] of rows)
    lines.push(
      `| ${(t / 1000).toFixed(0)} ms | ${((100 * t) / busy).toFixed(1)}% | \`${name.replace(/\|/g, '\\|')}\` |`,
    );
  return lines.join('\n');
}

if (process.argv[2]) process.stdout.write(summarise(process.argv[2], Number(process.argv[3] ?? 15)) + '\n');
