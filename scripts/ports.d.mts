/** The process listening on a loopback TCP port, undefined when none is found (or `ss` is missing). */
export function listenerPid(port: number): number | undefined;
/** Connections established to `port` (the listener's side of each), undefined when `ss` cannot tell. */
export function connectionsTo(port: number): number | undefined;
