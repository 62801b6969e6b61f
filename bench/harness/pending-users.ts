/**
 * B8's sheet row by row: what the pending-users sheet holds (bench/harness/inputs.ts) and what the
 * database's reference writes for it (fixtures.ts insertCeiling), so both sides store the same values.
 */
const ROLES = ['patient', 'clinician', 'patient', 'patient'] as const;

/** The sheet's data row `i` (from 0): username, email, displayName, role. */
export function pendingUserRow(i: number): [username: string, email: string, displayName: string, role: string] {
  return [`pending.user${i}`, `pending.user${i}@example.org`, `Pending User ${i}`, ROLES[i % ROLES.length]!];
}
