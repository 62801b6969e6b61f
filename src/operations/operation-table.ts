import type { Requirement } from '../kernel/requirement.js';
import { API_GROUPS } from '../http/routes/groups.js';
import { GRAPHQL_OPERATIONS } from '../http/graphql/operations.js';
import { HUB_METHODS } from '../hub/hub.role.js';

export type Transport = 'rest' | 'graphql' | 'hub';
/** `events.get` (REST, as its route names it), `graphql.<operation>`, `hub.<method>`. */
export type OperationId = string;

export interface OperationEntry {
  transport: Transport;
  /** REST: `METHOD /path` as SPEC.md names it (`{*path}` spans segments); GraphQL: operation name; hub: method name. */
  name: string;
  requires: Requirement;
  note?: string;
}

/** `/get/:eventId` under `/api/events` -> `/api/events/get/{eventId}`; a wildcard `*path` -> `{*path}`. */
export function specPath(base: string, path: string): string {
  return `${base}${path}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*([A-Za-z0-9_]+)/g, '{*$1}');
}

const entry = (transport: Transport, name: string, d: { requires: Requirement; note?: string }): OperationEntry => ({
  transport,
  name,
  requires: d.requires,
  ...(d.note ? { note: d.note } : {}),
});

function collect(): Readonly<Record<OperationId, OperationEntry>> {
  const rows: [OperationId, OperationEntry][] = [
    ...API_GROUPS.flatMap((g) =>
      g.routes.map((r): [OperationId, OperationEntry] => [
        r.operationId,
        entry('rest', `${r.method.toUpperCase()} ${specPath(g.base, r.path)}`, r),
      ]),
    ),
    ...Object.entries(GRAPHQL_OPERATIONS).map(([name, d]): [OperationId, OperationEntry] => [
      `graphql.${name}`,
      entry('graphql', name, d),
    ]),
    ...HUB_METHODS.map((m): [OperationId, OperationEntry] => [`hub.${m.name}`, entry('hub', m.name, m)]),
  ];
  const out: Record<OperationId, OperationEntry> = {};
  for (const [id, e] of rows) {
    if (out[id]) throw new Error(`operation id ${id} is declared twice`);
    out[id] = e;
  }
  return Object.freeze(out);
}

/**
 * Every REST endpoint, GraphQL operation and hub method with what it requires: a view read from the
 * declarations the transports serve (route specs, graphql/operations.ts, the hub's methods), never a
 * second list of them. docs/permissions.md is rendered from it; tests hold it to SPEC.md and to what
 * each transport enforces.
 */
export const OPERATIONS = collect();

/** The requirement of an operation by id. */
export function permissionFor(id: OperationId): Requirement {
  const e = OPERATIONS[id];
  if (!e) throw new Error(`no operation ${id}`);
  return e.requires;
}

/** Operation id of a hub method or GraphQL operation by its name. */
export function operationByName(transport: Transport, name: string): OperationId | undefined {
  return Object.keys(OPERATIONS).find((id) => OPERATIONS[id]!.transport === transport && OPERATIONS[id]!.name === name);
}
