/**
 * The public members of a class: what a service can call on it. A fake declares
 * `implements PublicPart<UserRepository>`, so the compiler checks it offers every public method of the
 * real repository with the same signature.
 */
export type PublicPart<T> = { [K in keyof T]: T[K] };

/**
 * Hands a fake to a service whose dependency is typed with the real class. The class's private fields
 * (its database handle) are what the fake lacks, and a service cannot reach those; every public member
 * is checked by `PublicPart`.
 */
export function asReal<T>(fake: PublicPart<T>): T {
  return fake as unknown as T;
}
