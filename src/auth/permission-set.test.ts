import { describe, expect, it } from '@jest/globals';
import { permissionSet } from './access-token-verifier.js';

describe('permission sets of verified tokens', () => {
  it('are shared by tokens with the same perms, and hold only known permissions', () => {
    // Each token's payload is parsed anew: equal lists arrive as different arrays of different strings.
    const a = permissionSet(JSON.parse('["calls:make","profile:read","no:such"]') as string[]);
    const b = permissionSet(JSON.parse('["calls:make","profile:read","no:such"]') as string[]);
    expect(b).toBe(a);
    expect([...a].sort()).toEqual(['calls:make', 'profile:read']);
    const c = permissionSet(['profile:read']);
    expect(c).not.toBe(a);
    expect([...c]).toEqual(['profile:read']);
  });
});
