import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  OPERATIONS,
  permissionFor,
  operationByName,
  type OperationId,
} from '../../../src/operations/operation-table.js';
import { isPermission } from '../../../src/kernel/permissions.js';
import { renderPermissionsDoc } from '../../../src/operations/permission-doc.js';
import { buildSchema } from 'graphql';

const spec = readFileSync(new URL('../../../docs/spec/SPEC.md', import.meta.url), 'utf8');

/** Rows of the SPEC.md table under a heading: first cell values. */
function tableRows(heading: string): string[][] {
  const start = spec.indexOf(`\n${heading}`);
  if (start < 0) throw new Error(`SPEC.md has no heading ${heading}`);
  const rows: string[][] = [];
  for (const line of spec
    .slice(start + 1)
    .split('\n')
    .slice(1)) {
    if (line.startsWith('#')) break;
    if (!line.startsWith('|') || /^\|\s*-/.test(line) || /^\| (Method|Operation|Message) \|/.test(line)) continue;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

describe('what the operations declare they require (src/operations/operation-table.ts)', () => {
  const entries = Object.entries(OPERATIONS) as [OperationId, (typeof OPERATIONS)[OperationId]][];

  it('names every REST endpoint of SPEC.md exactly as SPEC names it', () => {
    const restNames = new Set(entries.filter(([, e]) => e.transport === 'rest').map(([, e]) => e.name));
    // Rows per SPEC heading: a heading renamed or a table reshaped fails here instead of checking nothing.
    const headings = {
      '### Account': 10,
      '### Media': 3,
      '### Files': 2,
      '### Tenant': 2,
      '### Admin helpers': 5,
      '### Bulk user upload': 1,
      '### Contacts': 10,
      '### Events': 6,
      '### Meetings': 2,
      '### Notifications': 3,
      '### Peripherals': 3,
    };
    const counted: Record<string, number> = {};
    for (const h of Object.keys(headings)) {
      const rows = tableRows(h);
      counted[h] = rows.length;
      for (const [method, path] of rows) expect(restNames).toContain(`${method} ${path!.split('?')[0]}`);
    }
    expect(counted).toEqual(headings);
  });

  it('names every GraphQL operation and hub method of SPEC.md', () => {
    const operations = tableRows('### GraphQL operations');
    expect(operations).toHaveLength(11);
    for (const [op] of operations) expect(operationByName('graphql', op!.replace(/\(.*$/, ''))).toBeDefined();
    const methods = tableRows('### Realtime hub methods').flatMap(([cell]) => cell!.split(',').map((s) => s.trim()));
    expect(methods).toHaveLength(26);
    for (const m of methods) expect(operationByName('hub', m)).toBeDefined();
  });

  it('requires only known permissions, public or authenticated, with unique names per transport', () => {
    for (const [id] of entries) {
      const r = permissionFor(id);
      expect(r === 'public' || r === 'authenticated' || isPermission(r)).toBe(true);
    }
    const keys = entries.map(([, e]) => `${e.transport} ${e.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('names exactly the Query and Mutation fields of the served GraphQL schema', () => {
    const schema = buildSchema(readFileSync(new URL('../../../docs/api/schema.graphql', import.meta.url), 'utf8'));
    const fields = [schema.getQueryType(), schema.getMutationType()].flatMap((t) => Object.keys(t?.getFields() ?? {}));
    const declared = entries.filter(([, e]) => e.transport === 'graphql').map(([, e]) => e.name);
    expect(declared.sort()).toEqual(fields.sort());
  });

  it('is what docs/permissions.md says (regenerate with `npx tsx src/operations/permission-doc.ts`)', () => {
    expect(readFileSync(new URL('../../../docs/permissions.md', import.meta.url), 'utf8')).toBe(renderPermissionsDoc());
  });
});
