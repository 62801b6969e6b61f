import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHubCluster } from '../../support/cluster.js';
import { must, recorder } from '../../support/hub-client.js';
import type { TestNode } from '../../support/node.js';
import { pythonSocketIo, runPythonHubClient, type PythonHubClient } from '../../support/python-client.js';

/**
 * A client of another language with its default settings: python-socketio (installed into a venv under
 * .local/ by the test set-up) connects with long-polling and upgrades, receives a push and calls a
 * method with an acknowledgement, on the node of the caller and on another node.
 */
describe('python-socketio as an outside client', () => {
  let python: string;
  let cluster: Awaited<ReturnType<typeof startHubCluster>>;
  let n: TestNode[];
  let ids: Record<string, string>;
  let tokens: Record<string, string>;
  const running: PythonHubClient[] = [];
  const tenantUrl = (node: TestNode) => `http://acme.localhost:${new URL(node.url!).port}`;

  beforeAll(async () => {
    python = pythonSocketIo();
    cluster = await startHubCluster(2, [
      ['alice', 'clinician'],
      ['pat', 'patient'],
    ]);
    ({ nodes: n, ids, tokens } = cluster);
  }, 300_000);
  afterAll(async () => {
    for (const p of running) p.kill();
    await cluster?.destroy();
  });

  it.each([
    ['the same node', 0],
    ['another node', 1],
  ])(
    'connects with long-polling, upgrades, receives onNewCall and accepts the call with an ack (%s)',
    async (_where, on) => {
      const py = runPythonHubClient(python, { url: tenantUrl(n[on]!), token: tokens.pat });
      running.push(py);
      // Long-polling first (the default), opened by a polling handshake (only those are offered upgrades),
      // then upgraded (python-socketio upgrades before connect() returns).
      expect(await py.next('connected')).toEqual({
        event: 'connected',
        transports: ['polling', 'websocket'],
        upgrades: ['websocket'],
        transport: 'websocket',
      });
      const alice = await cluster.on(0, 'alice');
      const ra = recorder(alice);
      const info = await must(alice, 'initCall', { calleeIds: [ids.pat] });
      const push = await py.next('push');
      expect(push).toMatchObject({ name: 'onNewCall', data: { call: { callId: info.callId, callerId: ids.alice } } });
      expect(await py.next('ack')).toMatchObject({
        method: 'acceptCall',
        result: { ok: true, data: { callId: info.callId, status: 'active' } },
      });
      expect(
        (await ra.next('onCallUpdated', (p) => p.call.callId === info.callId && p.call.status === 'active')).call
          .status,
      ).toBe('active');
      expect(await py.next('done')).toEqual({ event: 'done', transport: 'websocket' });
      expect(await py.exited).toBe(0);
    },
  );

  it('is refused without a token with the coded connect_error', async () => {
    const py = runPythonHubClient(python, { url: tenantUrl(n[1]!) });
    running.push(py);
    expect(await py.next('refused')).toMatchObject({ code: 'unauthenticated' });
    expect(await py.exited).toBe(3);
  });
});
