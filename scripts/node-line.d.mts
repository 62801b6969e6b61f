// Types of node-line.mjs for the TypeScript that imports it (bench/harness/node-lines.ts).
export const NODE_RELEASES: Record<22 | 24, string>;
export const DEVELOPMENT_LINE: 24;
export function engines(): string;
export function inEngines(version: string, range?: string): boolean;
export function fetchedNodePath(version: string): string;
export function nodeBinary(line?: number): string;
export function wantedNode(env?: NodeJS.ProcessEnv): string | null;
export function runOnSupportedNode(tag: string): Promise<void>;
