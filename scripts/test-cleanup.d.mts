// Types of test-cleanup.mjs for the TypeScript that imports it (test/support/global-teardown.ts).
/** The run's tag (four letters), made by the first global set-up of a jest run and kept in its environment. */
export function ensureRunTag(): string;
/** Deletes every key of the run's prefixes on each primary of `url`; answers how many. */
export function dropRunKeys(url: string, tag: string): Promise<number>;
/** Drops the databases of the run's ids; answers how many. */
export function dropRunDatabases(uri: string, tag: string): Promise<number>;
