import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** proto/ at the repository root (Buf module root). */
export const PROTO_ROOT = fileURLToPath(new URL('../../proto/', import.meta.url));
export const TELEMETRY_PROTO = 'consult/telemetry/v1/telemetry.proto';

/** Metadata keys of the ingest's per-tenant credential. */
export const TENANT_METADATA = 'x-tenant';
export const AUTH_METADATA = 'authorization';
/** Trailing metadata key carrying the service's stable error code on a refused call. */
export const ERROR_CODE_METADATA = 'x-error-code';
/** Seconds to wait before calling again, sent with RESOURCE_EXHAUSTED / `rate_limited`. */
export const RETRY_AFTER_METADATA = 'retry-after';

interface TelemetryPackage {
  consult: { telemetry: { v1: { TelemetryService: grpc.ServiceClientConstructor } } };
}

let cached: TelemetryPackage | undefined;

/**
 * Loads the telemetry service definition once. Fields are camelCase, 64-bit integers strings,
 * defaults filled in, and the oneof's chosen field named in `payload`.
 */
export function telemetryPackage(): TelemetryPackage {
  cached ??= grpc.loadPackageDefinition(
    protoLoader.loadSync(TELEMETRY_PROTO, {
      includeDirs: [PROTO_ROOT],
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    }),
  ) as unknown as TelemetryPackage;
  return cached;
}

export function telemetryServiceDefinition(): grpc.ServiceDefinition {
  return telemetryPackage().consult.telemetry.v1.TelemetryService.service;
}
