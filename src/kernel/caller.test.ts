import { describe, expect, it } from '@jest/globals';
import {
  Caller,
  callerOfPrincipal,
  catalogueId,
  compactCaller,
  expandCaller,
  PERMISSION_CATALOGUE,
  principalOf,
} from './caller.js';
import { BUILTIN_ROLES, PERMISSIONS } from './permissions.js';
import type { Principal } from './principal.js';

const alice: Principal = {
  tenant: 'acme',
  userId: 'a'.repeat(24),
  username: 'alice',
  role: 'clinician',
  permissions: new Set(['meetings:join', 'meetings:host']),
  scheme: 'internal',
  sessionId: 's1',
};

describe('the caller of a principal', () => {
  it('is made once per principal and frozen, so a turn cannot change the next call of the connection', () => {
    const c = callerOfPrincipal(alice);
    expect(callerOfPrincipal(alice)).toBe(c);
    expect(c).toEqual({
      userId: alice.userId,
      username: 'alice',
      role: 'clinician',
      permissions: ['meetings:join', 'meetings:host'],
      scheme: 'internal',
      sessionId: 's1',
    });
    expect(Object.isFrozen(c) && Object.isFrozen(c.permissions)).toBe(true);
    expect(() => (c.permissions as string[]).push('tenant:admin')).toThrow(TypeError);
    expect(principalOf('acme', c).permissions).toEqual(alice.permissions);
  });

  it('follows the principal that replaced it (a refresh, a role change): its own role and permissions', () => {
    const before = callerOfPrincipal(alice);
    const demoted: Principal = { ...alice, role: 'patient', permissions: new Set(['meetings:join']) };
    const after = callerOfPrincipal(demoted);
    expect(after).not.toBe(before);
    expect(after).toMatchObject({ role: 'patient', permissions: ['meetings:join'] });
    expect(callerOfPrincipal(alice).permissions).toEqual(['meetings:join', 'meetings:host']);
  });

  it("carries the token's display name and kind across nodes (JSON and the schema), or neither", () => {
    const named: Principal = { ...alice, displayName: 'Dr Alice', kind: 'person' };
    const wire = Caller.parse(JSON.parse(JSON.stringify(callerOfPrincipal(named))));
    expect(principalOf('acme', wire)).toMatchObject({ displayName: 'Dr Alice', kind: 'person' });
    const unnamed = principalOf('acme', Caller.parse(JSON.parse(JSON.stringify(callerOfPrincipal(alice)))));
    expect('displayName' in unnamed || 'kind' in unnamed).toBe(false);
  });
});

describe("a caller's permissions on the wire (decision 1156)", () => {
  const clinician = callerOfPrincipal({ ...alice, permissions: new Set(BUILTIN_ROLES.clinician!.permissions) });

  it('cross as a mask over the catalogue, and come back as the same set, for every role and each permission alone', () => {
    const sets = [
      ...Object.values(BUILTIN_ROLES).map((r) => r.permissions),
      ...PERMISSIONS.map((p) => [p]),
      [PERMISSIONS[0], PERMISSIONS[PERMISSIONS.length - 1]],
    ];
    for (const permissions of sets) {
      const c = callerOfPrincipal({ ...alice, permissions: new Set(permissions) });
      const wire = JSON.parse(JSON.stringify(compactCaller(c))) as Record<string, unknown>;
      expect(wire.permissions).toEqual([]);
      expect(wire.pm).toMatch(new RegExp(`^${PERMISSION_CATALOGUE}\\.[0-9a-f]+$`));
      const back = Caller.parse(expandCaller(wire));
      expect(new Set(back.permissions)).toEqual(new Set(permissions));
      expect(back).toEqual({ ...c, permissions: back.permissions });
    }
  });

  it("is shorter by the names' bytes: a clinician's 19 permissions in 18 characters", () => {
    const named = JSON.stringify(clinician).length;
    const masked = JSON.stringify(compactCaller(clinician)).length;
    expect(clinician.permissions).toHaveLength(19);
    expect(named - masked).toBeGreaterThan(250);
    expect(compactCaller(clinician)).toBe(compactCaller(clinician));
  });

  it('keeps the names when a permission is not in the catalogue', () => {
    const odd = { ...clinician, permissions: [...clinician.permissions, 'reports:read'] };
    expect(compactCaller(odd)).toBe(odd);
    expect(expandCaller(odd)).toBe(odd);
  });

  it('is refused when the mask is over another catalogue, or names a bit the catalogue lacks, or is not hexadecimal', () => {
    const wire = compactCaller(clinician);
    const mask = wire.pm!.split('.')[1]!;
    expect(catalogueId([...PERMISSIONS, 'reports:read'])).not.toBe(PERMISSION_CATALOGUE);
    expect(catalogueId([...PERMISSIONS].reverse())).not.toBe(PERMISSION_CATALOGUE);
    expect(expandCaller({ ...wire, pm: `${catalogueId([...PERMISSIONS].reverse())}.${mask}` })).toBeUndefined();
    expect(expandCaller({ ...wire, pm: `${PERMISSION_CATALOGUE}.f${'0'.repeat(15)}` })).toBeUndefined();
    expect(expandCaller({ ...wire, pm: `${PERMISSION_CATALOGUE}.xyz` })).toBeUndefined();
    expect(expandCaller({ ...wire, pm: mask })).toBeUndefined();
  });
});
