import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { OPERATIONS, permissionFor, operationByName, type OperationId } from '../../../src/auth/permission-table.js';
import { isPermission } from '../../../src/auth/permissions.js';
import { renderPermissionsDoc } from '../../../src/auth/permission-doc.js';

const spec = readFileSync(new URL('../../../docs/spec/SPEC.md', import.meta.url), 'utf8');

/** Rows of the SPEC.md table under a heading: first cell values. */
function tableRows(heading: string): string[][] {
  const start = spec.indexOf(heading);
  const rows: string[][] = [];
  for (const line of spec.slice(start).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    if (!line.startsWith('|') || /^\|\s*-/.test(line) || /^\| (Method|Operation|Message) \|/.test(line)) continue;
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

describe('the permission table', () => {
  const entries = Object.entries(OPERATIONS) as [OperationId, (typeof OPERATIONS)[OperationId]][];

  it('names every REST endpoint of SPEC.md exactly as SPEC names it', () => {
    const restNames = new Set(entries.filter(([, e]) => e.transport === 'rest').map(([, e]) => e.name));
    const headings = ['### Account', '### Media', '### Files', '### Tenant', '### Admin helpers', '### Bulk user upload', '### Contacts', '### Events', '### Meetings', '### Notifications', '### Peripherals'];
    for (const h of headings) {
      for (const [method, path] of tableRows(h)) expect(restNames).toContain(`${method} ${path!.split('?')[0]}`);
    }
  });

  it('names every GraphQL operation and hub method of SPEC.md', () => {
    for (const [op] of tableRows('### GraphQL operations')) expect(operationByName('graphql', op!.replace(/\(.*$/, ''))).toBeDefined();
    for (const [cell] of tableRows('### Realtime hub methods')) {
      for (const m of cell!.split(',').map((s) => s.trim())) expect(operationByName('hub', m)).toBeDefined();
    }
  });

  it('requires only known permissions, public or authenticated, with unique names per transport', () => {
    for (const [id] of entries) {
      const r = permissionFor(id);
      expect(r === 'public' || r === 'authenticated' || isPermission(r)).toBe(true);
    }
    const keys = entries.map(([, e]) => `${e.transport} ${e.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('is what docs/permissions.md says (regenerate with `npx tsx src/auth/permission-doc.ts`)', () => {
    expect(readFileSync(new URL('../../../docs/permissions.md', import.meta.url), 'utf8')).toBe(renderPermissionsDoc());
  });
});
