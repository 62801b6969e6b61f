import { describe, expect, it } from '@jest/globals';
import { Caller, callerOfPrincipal, principalOf } from './caller.js';
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
