import * as grpc from '@grpc/grpc-js';
import { AUTH_METADATA, ERROR_CODE_METADATA, TENANT_METADATA, telemetryPackage } from '../contracts/telemetry-proto.js';

/** A telemetry message as the client builds it (the proto's TelemetryEvent, camelCase). */
export type TelemetryMessage = {
  conferenceId: string;
  eventId: string;
  sequence: number;
  occurredAt: Date;
} & (
  | { participantJoined: { participantKey: string; userId?: string; displayName?: string; device?: string } }
  | { participantLeft: { participantKey: string } }
  | { recordingStarted: { recordingId: string } }
  | { recordingStopped: { recordingId: string } }
  | { chatActivity: { messageCount: number } }
  | { conferenceEnded: { reason?: string } }
);

export interface TelemetryAckMessage {
  stored: number;
  duplicates: number;
  completionsEnqueued: string[];
}

/** A refused call: gRPC status plus the service's stable error code. */
export class TelemetryCallError extends Error {
  constructor(
    readonly status: grpc.status,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'TelemetryCallError';
  }
}

function toWire(m: TelemetryMessage): Record<string, unknown> {
  const ms = m.occurredAt.getTime();
  return {
    ...m,
    sequence: String(m.sequence),
    occurredAt: { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 },
  };
}

/**
 * The video conferencing side of the telemetry ingest: what the embedded adapter (and tests, demos,
 * a real VCS bridge) use to push a conference's telemetry over gRPC with the tenant's key.
 */
export class TelemetryClient {
  private readonly client: grpc.Client & Record<string, (...args: unknown[]) => unknown>;

  constructor(
    address: string,
    private readonly tenant: string,
    private readonly key: string,
  ) {
    const Service = telemetryPackage().consult.telemetry.v1.TelemetryService;
    this.client = new Service(address, grpc.credentials.createInsecure()) as typeof this.client;
  }

  /** The call's metadata; a W3C `traceparent` makes the ingest's spans children of the caller's (decision 840). */
  private metadata(traceparent?: string): grpc.Metadata {
    const md = new grpc.Metadata();
    md.set(TENANT_METADATA, this.tenant);
    md.set(AUTH_METADATA, `Bearer ${this.key}`);
    if (traceparent) md.set('traceparent', traceparent);
    return md;
  }

  /** Sends messages as one client stream; `raw` lets tests send malformed messages as they are. */
  stream(
    messages: readonly (TelemetryMessage | Record<string, unknown>)[],
    opts: { raw?: boolean; traceparent?: string } = {},
  ): Promise<TelemetryAckMessage> {
    return new Promise((resolve, reject) => {
      const call = this.client.streamTelemetry(
        this.metadata(opts.traceparent),
        (err: grpc.ServiceError | null, res: { ack: TelemetryAckMessage }) =>
          err ? reject(callError(err)) : resolve(res.ack),
      ) as grpc.ClientWritableStream<unknown>;
      call.on('error', () => undefined);
      for (const m of messages) call.write({ event: opts.raw ? m : toWire(m as TelemetryMessage) });
      call.end();
    });
  }

  /** Sends up to 500 messages in one unary call. */
  sendBatch(
    messages: readonly (TelemetryMessage | Record<string, unknown>)[],
    opts: { raw?: boolean; traceparent?: string } = {},
  ): Promise<TelemetryAckMessage> {
    return new Promise((resolve, reject) => {
      const events = messages.map((m) => (opts.raw ? m : toWire(m as TelemetryMessage)));
      this.client.sendTelemetryBatch(
        { events },
        this.metadata(opts.traceparent),
        (err: grpc.ServiceError | null, res: { ack: TelemetryAckMessage }) =>
          err ? reject(callError(err)) : resolve(res.ack),
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

function callError(err: grpc.ServiceError): TelemetryCallError {
  const code = err.metadata?.get(ERROR_CODE_METADATA)[0];
  return new TelemetryCallError(err.code, typeof code === 'string' ? code : undefined, err.details || err.message);
}

/**
 * A whole conference as the embedded system reports it: joins, chat, optional recording, leaves and
 * the end, numbered from 1. Used by `npm start` demos and tests to drive completion.
 */
export function conferenceScript(opts: {
  conferenceId: string;
  eventId: string;
  participants: { key: string; userId?: string; name: string; device?: string }[];
  chatMessages?: number;
  recording?: boolean;
  start?: Date;
}): TelemetryMessage[] {
  const t0 = (opts.start ?? new Date('2026-01-01T10:00:00Z')).getTime();
  const base = { conferenceId: opts.conferenceId, eventId: opts.eventId };
  const out: TelemetryMessage[] = [];
  const at = (min: number) => new Date(t0 + min * 60_000);
  const add = (min: number, body: object) =>
    out.push({ ...base, sequence: out.length + 1, occurredAt: at(min), ...body } as TelemetryMessage);
  opts.participants.forEach((p, i) =>
    add(i, {
      participantJoined: { participantKey: p.key, userId: p.userId ?? '', displayName: p.name, device: p.device ?? '' },
    }),
  );
  if (opts.recording) add(5, { recordingStarted: { recordingId: `rec-${opts.conferenceId}` } });
  if (opts.chatMessages) add(6, { chatActivity: { messageCount: opts.chatMessages } });
  if (opts.recording) add(20, { recordingStopped: { recordingId: `rec-${opts.conferenceId}` } });
  opts.participants.forEach((p, i) => add(25 + i, { participantLeft: { participantKey: p.key } }));
  add(30, { conferenceEnded: { reason: 'host_ended' } });
  return out;
}
