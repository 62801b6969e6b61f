import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, expect } from '@jest/globals';
import ts from 'typescript';
import { parse } from 'yaml';
import { OPERATIONS } from '../../../src/operations/operation-table.js';
import { ERROR_CODES } from '../../../src/kernel/errors.js';
import { HUB_METHODS } from '../../../src/hub/hub.role.js';
import { SERVER_EVENTS } from '../../../src/hub/hub.events.js';
import { HUB_ERROR_GROUPS, hubMethodErrors } from '../../../src/hub/hub.errors.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (rel: string) => readFileSync(path.join(root, rel), 'utf8');
const asyncapiText = read('docs/asyncapi.yaml');
const asyncapi = parse(asyncapiText) as {
  operations: Record<
    string,
    { action: 'send' | 'receive'; messages: { $ref: string }[]; reply?: { messages: { $ref: string }[] } }
  >;
  components: { messages: Record<string, { name: string; payload: any }> };
};
const guide = read('docs/hub.md');
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

/**
 * Member names of an interface, read with the TypeScript parser: the typed event maps themselves (client
 * methods in src/hub/hub.events.ts, pushed messages in src/contracts/pushes.ts).
 */
function interfaceKeys(name: string, file = 'src/hub/hub.events.ts'): string[] {
  const src = ts.createSourceFile(file, read(file), ts.ScriptTarget.ES2022, true);
  const decl = src.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name,
  );
  if (!decl) throw new Error(`no interface ${name} in ${file}`);
  return decl.members.map((m) => (m.name as ts.Identifier).text);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [rel] : [];
  });
}

/**
 * Event names the server sends, found in the source: `socket.emit('x', …)` / `io.to(r).emit('x', …)`,
 * actor and publisher pushes `emit(rooms, 'x', payload)`, push messages `{ event: 'x' }`, and the
 * signalling relay's `relay(ctx, socket, 'x', …)`. Node EventEmitters (`….events.emit`) are not pushes.
 */
function emittedNames(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const patterns = [
    /(?<!events)\.emit\(\s*'(\w+)'/g,
    /(?<!events)\.emit\([^;'`]*?,\s*'(\w+)'\s*,/g,
    /\bevent:\s*'(\w+)',/g,
    /\brelay\(ctx,\s*socket,\s*'(\w+)'/g,
  ];
  for (const file of sourceFiles('src')) {
    const text = read(file);
    for (const re of patterns) for (const m of text.matchAll(re)) found.set(m[1]!, [...(found.get(m[1]!) ?? []), file]);
  }
  return found;
}

const ref = (r: string) => r.split('/').pop()!;

describe('hub protocol documents stay in sync with the code', () => {
  it('serves every hub method of docs/permissions.md and of the typed ClientToServerEvents map, each once', () => {
    const table = Object.values(OPERATIONS)
      .filter((o) => o.transport === 'hub')
      .map((o) => o.name)
      .sort();
    const served = HUB_METHODS.map((m) => m.name).sort();
    expect(served).toEqual(table);
    expect(served).toEqual(sorted(interfaceKeys('ClientToServerEvents')));
    for (const m of HUB_METHODS)
      expect(OPERATIONS[`hub.${m.name}`]).toMatchObject({ name: m.name, requires: m.requires });
  });

  it('docs/asyncapi.yaml has exactly the served methods, each with its arguments and an ack listing its error codes', () => {
    const documented = Object.entries(asyncapi.operations)
      .filter(([, o]) => o.action === 'receive')
      .map(([name]) => name);
    expect(sorted(documented)).toEqual(sorted(HUB_METHODS.map((m) => m.name)));
    for (const m of HUB_METHODS) {
      const op = asyncapi.operations[m.name]!;
      expect(op.messages.map((x) => ref(x.$ref))).toEqual([`${m.name}Call`]);
      expect(asyncapi.components.messages[`${m.name}Call`]?.name).toBe(m.name);
      expect(op.reply?.messages.map((x) => ref(x.$ref))).toEqual([`${m.name}Ack`]);
      const ack = asyncapi.components.messages[`${m.name}Ack`]!.payload;
      const negative = ack.oneOf.find((b: any) => b.properties.ok.const === false);
      const codes: string[] = negative.properties.error.allOf[1].properties.code.enum;
      expect(`${m.name}: ${sorted(codes).join(', ')}`).toBe(`${m.name}: ${hubMethodErrors(m.name).join(', ')}`);
      expect(guide).toContain('`' + m.name + '`');
    }
  });

  it('every error code thrown by the code behind a method is listed for it, and every listed code exists', () => {
    for (const [group, { files, codes }] of Object.entries(HUB_ERROR_GROUPS)) {
      const thrown = files.flatMap((f) => [...read(f).matchAll(/AppError\(\s*'(\w+)'/g)].map((m) => m[1]!));
      const missing = sorted(thrown).filter((c) => !(codes as readonly string[]).includes(c));
      expect(`${group}: ${missing.join(', ')}`).toBe(`${group}: `);
      for (const c of codes) expect(Object.keys(ERROR_CODES)).toContain(c);
    }
  });

  it('documents every pushed message: the typed ServerToClientEvents map, SERVER_EVENTS and what the source emits, both ways', () => {
    const typed = sorted(interfaceKeys('ServerToClientEvents', 'src/contracts/pushes.ts'));
    expect(sorted(SERVER_EVENTS)).toEqual(typed);
    const documented = Object.entries(asyncapi.operations)
      .filter(([, o]) => o.action === 'send')
      .map(([name, o]) => {
        expect(name).toMatch(/^push_/);
        const message = asyncapi.components.messages[ref(o.messages[0]!.$ref)]!;
        return message.name;
      });
    expect(sorted(documented)).toEqual(typed);
    const emitted = emittedNames();
    // Everything the server emits is a documented push; every documented push is emitted somewhere.
    expect(sorted(emitted.keys())).toEqual(typed);
    for (const e of typed) expect(guide).toContain('`' + e + '`');
  });

  it('every $ref of the document resolves', () => {
    const doc = parse(asyncapiText);
    const refs = [...asyncapiText.matchAll(/\$ref: '#\/([^']+)'/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(100);
    for (const r of refs) {
      const target = r.split('/').reduce<any>((node, key) => node?.[key], doc);
      expect(`${r}: ${target === undefined ? 'missing' : 'ok'}`).toBe(`${r}: ok`);
    }
  });
});
