/**
 * Baseline of B10: a bare grpc-js server with the same proto that acknowledges every batch as
 * stored (no credential check, validation, storage or completion).
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Hosted } from '../harness/host.js';

export async function start(p: { protoRoot: string; proto: string }): Promise<Hosted> {
  const def = protoLoader.loadSync(p.proto, {
    includeDirs: [p.protoRoot],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    consult: { telemetry: { v1: { TelemetryService: grpc.ServiceClientConstructor } } };
  };
  const server = new grpc.Server();
  server.addService(pkg.consult.telemetry.v1.TelemetryService.service, {
    SendTelemetryBatch: (
      call: grpc.ServerUnaryCall<{ events: unknown[] }, unknown>,
      cb: grpc.sendUnaryData<unknown>,
    ) => {
      cb(null, { ack: { stored: call.request.events.length, duplicates: 0, completionsEnqueued: [] } });
    },
    StreamTelemetry: (call: grpc.ServerReadableStream<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      let n = 0;
      call.on('data', () => n++);
      call.on('end', () => cb(null, { ack: { stored: n, duplicates: 0, completionsEnqueued: [] } }));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, port) =>
      e ? reject(e) : resolve(port),
    ),
  );
  return {
    info: { address: `127.0.0.1:${port}` },
    stop: () => new Promise((r) => server.tryShutdown(() => r())),
  };
}
