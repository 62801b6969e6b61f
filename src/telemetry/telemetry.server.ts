import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { SpanKind, startSpan } from '../observability/tracing.js';
import type { Logger } from 'pino';
import { toAppError, type AppError } from '../kernel/errors.js';
import type { Metrics } from '../observability/metrics.js';
import {
  AUTH_METADATA,
  ERROR_CODE_METADATA,
  RETRY_AFTER_METADATA,
  TENANT_METADATA,
  telemetryServiceDefinition,
} from '../contracts/telemetry-proto.js';
import { MAX_BATCH, toRecords } from '../contracts/telemetry.schema.js';
import type { TelemetryAck, TelemetryIngestService } from '../core/meetings/telemetry-ingest.service.js';

/** gRPC status for each HTTP-ish status of our error codes. */
function grpcStatus(e: AppError): grpc.status {
  if (e.code === 'validation_failed' || e.code === 'bad_request') return grpc.status.INVALID_ARGUMENT;
  if (e.status === 401) return grpc.status.UNAUTHENTICATED;
  if (e.status === 403) return grpc.status.PERMISSION_DENIED;
  if (e.status === 404) return grpc.status.NOT_FOUND;
  if (e.status === 409) return grpc.status.FAILED_PRECONDITION;
  if (e.status === 413 || e.status === 429) return grpc.status.RESOURCE_EXHAUSTED;
  if (e.status === 503) return grpc.status.UNAVAILABLE;
  if (e.status === 504) return grpc.status.DEADLINE_EXCEEDED;
  return grpc.status.INTERNAL;
}

export function toServiceError(err: unknown): Partial<grpc.StatusObject> {
  const e = toAppError(err);
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_CODE_METADATA, e.code);
  if (e.retryAfter) metadata.set(RETRY_AFTER_METADATA, String(Math.ceil(e.retryAfter)));
  return { code: grpcStatus(e), details: e.code === 'internal' ? 'internal error' : e.message, metadata };
}

function credentials(md: grpc.Metadata): [string | undefined, string | undefined] {
  const tenant = md.get(TENANT_METADATA)[0];
  const auth = md.get(AUTH_METADATA)[0];
  const key = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7).trim() : undefined;
  return [typeof tenant === 'string' ? tenant : undefined, key];
}

/**
 * Counts one call of an authenticated credential (tenant) and throws `rate_limited` past its limit.
 * Counted after authentication, so callers without the key cannot spend a tenant's budget.
 */
export type CallLimit = (tenant: string) => Promise<void>;

const wireAck = (a: TelemetryAck) => ({
  ack: { stored: a.stored, duplicates: a.duplicates, completionsEnqueued: a.completionsEnqueued },
});

/**
 * The transport of the ingest: authenticate from metadata, validate, hand over to the ingest
 * service, acknowledge. A client stream is stored in chunks of MAX_BATCH as it arrives, so memory
 * stays bounded however long the conference.
 */
export function telemetryHandlers(
  ingest: TelemetryIngestService,
  logger: Logger,
  metrics: Metrics,
  limit: CallLimit = async () => undefined,
): grpc.UntypedServiceImplementation {
  const authenticate = async (md: grpc.Metadata) => {
    const tenant = await ingest.authenticate(...credentials(md));
    await limit(tenant);
    return tenant;
  };
  const received = metrics.counter('telemetry_messages_total', 'Telemetry messages received', ['outcome']);
  const refused = metrics.counter('telemetry_calls_refused_total', 'Telemetry calls refused', ['code']);
  const fail = (cb: grpc.sendUnaryData<unknown>, err: unknown) => {
    const se = toServiceError(err);
    refused.inc({ code: String(se.metadata?.get(ERROR_CODE_METADATA)[0]) });
    if (se.code === grpc.status.INTERNAL) logger.error({ component: 'telemetry', err }, 'telemetry call failed');
    cb(se as grpc.ServiceError);
  };
  const count = (a: TelemetryAck) => {
    received.inc({ outcome: 'stored' }, a.stored);
    received.inc({ outcome: 'duplicate' }, a.duplicates);
  };

  return {
    sendTelemetryBatch(call: grpc.ServerUnaryCall<{ events: unknown[] }, unknown>, cb: grpc.sendUnaryData<unknown>) {
      const span = grpcSpan('SendTelemetryBatch', call.metadata);
      span
        .run(async () => {
          const tenant = await authenticate(call.metadata);
          span.span?.setAttribute('tenant', tenant);
          const ack = await ingest.ingest(tenant, toRecords(call.request.events ?? []));
          count(ack);
          span.end();
          cb(null, wireAck(ack));
        })
        .catch((err) => {
          span.end(err);
          fail(cb, err);
        });
    },

    streamTelemetry(call: grpc.ServerReadableStream<{ event?: unknown }, unknown>, cb: grpc.sendUnaryData<unknown>) {
      const total: TelemetryAck = { stored: 0, duplicates: 0, completionsEnqueued: [] };
      let buffer: unknown[] = [];
      let index = 0;
      let failed = false;
      const span = grpcSpan('StreamTelemetry', call.metadata);
      let chain = span.run(() => authenticate(call.metadata));
      const flush = () => {
        const chunk = buffer;
        const offset = index - chunk.length;
        buffer = [];
        // Continuations run in the call's span, not in the context of the stream's 'data' event.
        chain = span.run(() =>
          chain.then(async (tenant) => {
            const ack = await ingest.ingest(tenant, toRecords(chunk, offset));
            count(ack);
            total.stored += ack.stored;
            total.duplicates += ack.duplicates;
            total.completionsEnqueued.push(...ack.completionsEnqueued);
            return tenant;
          }),
        );
      };
      const abort = (err: unknown) => {
        if (failed) return;
        failed = true;
        span.end(err);
        call.removeAllListeners('data');
        fail(cb, err);
      };
      chain.catch(abort);
      call.on('data', (msg: { event?: unknown }) => {
        buffer.push(msg.event ?? {});
        index += 1;
        if (buffer.length >= MAX_BATCH) {
          flush();
          chain.catch(abort);
        }
      });
      call.on('end', () => {
        flush();
        chain.then(() => {
          if (failed) return;
          span.end();
          cb(null, wireAck(total));
        }, abort);
      });
      call.on('error', abort);
    },
  };
}

/** A server span of one ingest call, continuing the `traceparent` the conferencing system sent in metadata. */
function grpcSpan(method: string, md: grpc.Metadata) {
  const header = (name: string) => {
    const v = md.get(name)[0];
    return typeof v === 'string' ? v : undefined;
  };
  return startSpan(`grpc ${method}`, {
    kind: SpanKind.SERVER,
    parent: { traceparent: header('traceparent'), tracestate: header('tracestate') },
    attributes: { 'rpc.system': 'grpc', 'rpc.service': 'consult.telemetry.v1.TelemetryService', 'rpc.method': method },
  });
}

/**
 * Transport security of the ingest: TLS with the configured certificate, and client certificates
 * checked against `clientCaFile` when set (mTLS); plaintext only when no certificate is configured
 * (development, loopback).
 */
export function telemetryCredentials(tls?: {
  certFile: string;
  keyFile: string;
  clientCaFile?: string;
}): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  const ca = tls.clientCaFile ? readFileSync(tls.clientCaFile) : null;
  return grpc.ServerCredentials.createSsl(
    ca,
    [{ cert_chain: readFileSync(tls.certFile), private_key: readFileSync(tls.keyFile) }],
    !!ca,
  );
}

/** Starts the gRPC server on host:port (port 0 = any free port) and returns the bound port. */
export async function startTelemetryServer(opts: {
  host: string;
  port: number;
  handlers: grpc.UntypedServiceImplementation;
  credentials?: grpc.ServerCredentials;
}): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024 });
  server.addService(telemetryServiceDefinition(), opts.handlers);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      `${opts.host}:${opts.port}`,
      opts.credentials ?? grpc.ServerCredentials.createInsecure(),
      (err, p) => (err ? reject(err) : resolve(p)),
    );
  });
  return { server, port };
}
