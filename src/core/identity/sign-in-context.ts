/** Where a sign-in comes from (for audit records and session metadata). */
export interface SignInContext {
  ip?: string;
  userAgent?: string;
}
