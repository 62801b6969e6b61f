import type { Socket as NetSocket } from 'node:net';

/** What this module reads of an engine.io connection: its transport, and for WebSocket the ws socket. */
interface EngineConnection {
  transport?: { name?: string; socket?: { _socket?: NetSocket } };
}

/** The engine.io server's `flush` event: emitted with the connection before its packets are written. */
interface FlushEvents {
  on(name: 'flush', listener: (conn: EngineConnection) => void): unknown;
}

/**
 * Frames written to hub connections' WebSockets during one turn of the event loop, after its first,
 * leave together at the end of it (decision 1134): the TCP socket of each is corked at its frame and
 * uncorked in the turn's check phase, so acks and pushes go out in the order they were written, one
 * `writev` per connection. Under load the node answers a batch of calls from one poll of its sockets,
 * then writes their acks back to back: a write that has to wake the reading process (the kernel's cost
 * of a loopback or NIC write to a sleeping reader) mostly finds it awake. The turn's first frame is
 * written at once, so a node that answers one call per turn adds no wait. One listener on the engine
 * serves every connection (no per-connection closure). Long-polling responses are untouched.
 */
export function coalesceWrites(engine: FlushEvents): void {
  engine.on('flush', corkUntilCheck);
}

const corked: NetSocket[] = [];
let scheduled = false;
/**
 * While the check phase writes: engine.io holds a connection's later frames until its first write is
 * done (the write's callback, on the next tick), then hands them over at once; they are written in one
 * go in that tick, not held for the next turn of the loop.
 */
let writing = false;

function corkUntilCheck(conn: EngineConnection): void {
  const transport = conn.transport;
  if (transport?.name !== 'websocket') return;
  const socket = transport.socket?._socket;
  // writableCorked > 0: already corked this turn (or by someone else, who uncorks it).
  if (!socket || socket.destroyed || socket.writableCorked > 0) return;
  if (writing) {
    // The frames engine.io held leave together as soon as it has handed them all over (this tick).
    socket.cork();
    process.nextTick(uncork, socket);
    return;
  }
  if (!scheduled) {
    // The turn's first frame leaves at once: a node that answers one call per turn adds no wait.
    scheduled = true;
    setImmediate(uncorkAll);
    return;
  }
  socket.cork();
  corked.push(socket);
}

/** Writes every socket corked this turn (each one `writev` of its frames), in the order first written. */
function uncorkAll(): void {
  scheduled = false;
  writing = true;
  const sockets = corked.splice(0);
  for (const socket of sockets) uncork(socket);
  // Queued after the writes' callbacks, in which engine.io hands over the frames it held.
  process.nextTick(() => (writing = false));
}

function uncork(socket: NetSocket): void {
  if (socket.writableCorked > 0) socket.uncork();
}
