import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { startTestNode, type TestNode } from '../../support/node.js';
import type { TelemetryRoleHandle } from '../../../src/telemetry/telemetry.role.js';

const PROTO_ROOT = path.resolve(process.cwd(), 'proto');

/** A client built from proto/ alone, as the video conferencing system would build it. */
function telemetryClient(port: number, credentials: grpc.ChannelCredentials): grpc.Client & Record<string, any> {
  const def = protoLoader.loadSync('consult/telemetry/v1/telemetry.proto', {
    includeDirs: [PROTO_ROOT],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as any;
  return new pkg.consult.telemetry.v1.TelemetryService(`127.0.0.1:${port}`, credentials, {
    'grpc.ssl_target_name_override': 'localhost',
    'grpc.use_local_subchannel_pool': 1,
  });
}

/** Sends an empty batch with a wrong key: reaching the service at all answers UNAUTHENTICATED. */
function probe(client: grpc.Client & Record<string, any>): Promise<grpc.status> {
  const md = new grpc.Metadata();
  md.set('x-tenant', 'nobody');
  md.set('authorization', 'Bearer wrong-key');
  return new Promise((resolve) => {
    client.sendTelemetryBatch({ events: [] }, md, { deadline: Date.now() + 5000 }, (err: grpc.ServiceError | null) =>
      resolve(err ? err.code : grpc.status.OK),
    );
  });
}

/** A test CA, a server certificate for localhost/127.0.0.1 and a client certificate, made by openssl. */
function makePki(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
  );
  writeFileSync(path.join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=localhost',
  );
  ssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '1',
    '-extfile',
    'server.ext',
  );
  ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'client.key',
    '-out',
    'client.csr',
    '-subj',
    '/CN=vcs',
  );
  ssl(
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'client.crt',
    '-days',
    '1',
  );
  const f = (n: string) => path.join(dir, n);
  return { f, read: (n: string) => readFileSync(f(n)) };
}

describe('telemetry ingest over TLS', () => {
  let dir: string;
  let pki: ReturnType<typeof makePki>;
  let tls: TestNode;
  let mtls: TestNode;
  const portOf = (n: TestNode) => (n.roles.get('telemetry') as TelemetryRoleHandle).port;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'grpc-pki-'));
    pki = makePki(dir);
    tls = await startTestNode({
      ROLES: 'telemetry',
      GRPC_TLS_CERT_FILE: pki.f('server.crt'),
      GRPC_TLS_KEY_FILE: pki.f('server.key'),
    });
    mtls = await startTestNode({
      ROLES: 'telemetry',
      GRPC_TLS_CERT_FILE: pki.f('server.crt'),
      GRPC_TLS_KEY_FILE: pki.f('server.key'),
      GRPC_TLS_CA_FILE: pki.f('ca.crt'),
      GRPC_TLS_CLIENT_AUTH: 'true',
    });
  });
  afterAll(async () => {
    await tls?.destroy();
    await mtls?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves TLS with the configured certificate and refuses plaintext', async () => {
    const secure = telemetryClient(portOf(tls), grpc.credentials.createSsl(pki.read('ca.crt')));
    expect(await probe(secure)).toBe(grpc.status.UNAUTHENTICATED);
    secure.close();
    const plain = telemetryClient(portOf(tls), grpc.credentials.createInsecure());
    expect(await probe(plain)).toBe(grpc.status.UNAVAILABLE);
    plain.close();
  });

  it('with client authentication, admits only clients with a certificate of the CA', async () => {
    const withCert = telemetryClient(
      portOf(mtls),
      grpc.credentials.createSsl(pki.read('ca.crt'), pki.read('client.key'), pki.read('client.crt')),
    );
    expect(await probe(withCert)).toBe(grpc.status.UNAUTHENTICATED);
    withCert.close();
    // Without a certificate the server ends the handshake with TLS 1.3's certificate_required alert. Seen
    // from a plain TLS client: a gRPC client left its refused connection open after close().
    const refused = await new Promise<string>((resolve) => {
      const socket = tlsConnect({
        host: '127.0.0.1',
        port: portOf(mtls),
        servername: 'localhost',
        ca: pki.read('ca.crt'),
        ALPNProtocols: ['h2'],
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      socket.once('close', () => resolve('closed without an alert'));
    });
    expect(refused).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
  });

  it('binds where HOST says unless GRPC_HOST is set', async () => {
    const { loadConfig } = await import('../../../src/config/config.js');
    expect(loadConfig({ HOST: '127.0.0.1' }).grpc.host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '127.0.0.1', GRPC_HOST: '0.0.0.0' }).grpc.host).toBe('0.0.0.0');
  });
});
