/**
 * A child node's live heap, read through the V8 inspector the node was started with
 * (`spawnChildNode(..., { inspect: true })`): a full garbage collection first, then the heap in use. A
 * heap figure read from /metrics counts garbage not yet collected, which on an idle node can stay for
 * minutes; this one is what the node holds.
 */
export async function liveHeapBytes(inspectorUrl: string, timeoutMs = 30_000): Promise<number> {
  const ws = new WebSocket(inspectorUrl);
  const replies = new Map<number, (r: { result?: Record<string, unknown>; error?: unknown }) => void>();
  let next = 1;
  const call = (method: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const id = next++;
      replies.set(id, (r) =>
        r.error ? reject(new Error(`${method}: ${JSON.stringify(r.error)}`)) : resolve(r.result ?? {}),
      );
      ws.send(JSON.stringify({ id, method }));
    });
  ws.addEventListener('message', (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: Record<string, unknown>; error?: unknown };
    if (msg.id === undefined) return;
    replies.get(msg.id)?.(msg);
    replies.delete(msg.id);
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`inspector ${inspectorUrl} did not answer in ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([
      (async () => {
        await new Promise<void>((resolve, reject) => {
          ws.addEventListener('open', () => resolve(), { once: true });
          ws.addEventListener('error', () => reject(new Error(`inspector ${inspectorUrl} refused`)), { once: true });
        });
        await call('HeapProfiler.collectGarbage');
        const usage = await call('Runtime.getHeapUsage');
        return Number(usage.usedSize);
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
    ws.close();
  }
}
