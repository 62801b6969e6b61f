import { readFileSync } from 'node:fs';
import { describe, it, expect } from '@jest/globals';
import { OPERATIONS } from '../../../src/auth/permission-table.js';
import { HUB_METHODS } from '../../../src/hub/hub.role.js';
import { SERVER_EVENTS } from '../../../src/hub/hub.events.js';

const asyncapi = readFileSync(new URL('../../../docs/asyncapi.yaml', import.meta.url), 'utf8');
const guide = readFileSync(new URL('../../../docs/hub.md', import.meta.url), 'utf8');

describe('hub protocol documents stay in sync with the code', () => {
  it('serves every hub method of the permission table, each once', () => {
    const table = Object.values(OPERATIONS).filter((o) => o.transport === 'hub').map((o) => o.name).sort();
    const served = HUB_METHODS.map((m) => m.name).sort();
    expect(served).toEqual(table);
    for (const m of HUB_METHODS) expect(OPERATIONS[m.op].name).toBe(m.name);
  });

  it('documents every method and pushed message in docs/hub.md and docs/asyncapi.yaml', () => {
    expect(asyncapi).toMatch(/^asyncapi: 3\.0\.0$/m);
    for (const m of HUB_METHODS) {
      expect(asyncapi).toContain(`\n  ${m.name}:\n    action: receive\n`);
      expect(guide).toContain('`' + m.name + '`');
    }
    for (const e of SERVER_EVENTS) {
      expect(asyncapi).toContain(`\n  push_${e}:\n    action: send\n`);
      expect(guide).toContain('`' + e + '`');
    }
  });
});
