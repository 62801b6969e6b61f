// The V8 flags every product node runs with: `npm start`, the container image (Dockerfile CMD), the
// nodes the tests spawn compiled and the bench's product nodes (decision 1141). One list, read by each.

/**
 * `--max-semi-space-size=16`: the young generation's two halves at most 16 MiB each, as Node.js 20 sized
 * them. Node.js 24 lets them grow to 32 MiB on this kind of machine: every node then holds 32 MiB more of
 * short-lived garbage, and an upload's stream buffers, freed only with it, showed as twice the RSS growth.
 */
export const NODE_FLAGS = ['--max-semi-space-size=16'];
