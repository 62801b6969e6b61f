import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OPERATIONS, type Transport } from './operation-table.js';
import { BUILTIN_ROLES, PERMISSIONS } from '../kernel/permissions.js';

const SECTIONS: [Transport, string][] = [
  ['rest', 'REST endpoints'],
  ['graphql', 'GraphQL operations'],
  ['hub', 'Realtime hub methods (/hubs/mobile)'],
];

/**
 * Renders docs/permissions.md from what each operation declares it requires (operation-table.ts) and
 * the built-in roles, so the document can never drift from what the guards enforce (a test compares the two).
 */
export function renderPermissionsDoc(): string {
  const out = [
    '# Permissions',
    '',
    '<!-- Generated from the route specs (src/http/routes), src/http/graphql/operations.ts, the hub methods (src/hub/handlers) and src/kernel/permissions.ts by `npx tsx src/operations/permission-doc.ts`. Do not edit by hand. -->',
    '',
    'Every operation names what it requires: a permission, `authenticated` (any signed-in principal; the',
    'operation checks ownership itself) or `public` (no token; the operation proves the caller otherwise).',
    'Missing principal -> 401 `unauthenticated`; missing permission -> 403 `permission_denied`.',
    '',
  ];
  for (const [transport, title] of SECTIONS) {
    out.push(`## ${title}`, '', '| Operation id | Endpoint | Requires | Note |', '|---|---|---|---|');
    for (const [id, e] of Object.entries(OPERATIONS)) {
      if (e.transport === transport) out.push(`| \`${id}\` | \`${e.name}\` | \`${e.requires}\` | ${e.note ?? ''} |`);
    }
    out.push('');
  }
  out.push(
    '## Built-in roles',
    '',
    'Tenant roles live in the `roles` collection; these are seeded by migrations. Admins assign roles with `POST /api/account/assignRole` and cannot hand out more than they hold.',
    '',
  );
  out.push(
    `| Permission | ${Object.keys(BUILTIN_ROLES).join(' | ')} |`,
    `|---|${Object.keys(BUILTIN_ROLES)
      .map(() => '---')
      .join('|')}|`,
  );
  for (const p of PERMISSIONS)
    out.push(
      `| \`${p}\` | ${Object.values(BUILTIN_ROLES)
        .map((r) => (r.permissions.includes(p) ? 'yes' : ''))
        .join(' | ')} |`,
    );
  return `${out.join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(new URL('../../docs/permissions.md', import.meta.url), renderPermissionsDoc());
}
