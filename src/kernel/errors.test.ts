import { describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import { AppError, ERROR_CODES, isPermanent, isTransient, toAppError, type ErrorCode } from './errors.js';

describe('error codes: what repeating an operation can do', () => {
  it('calls routing and availability failures transient, and nothing else', () => {
    const transient = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => isTransient(new AppError(c)));
    expect(transient.sort()).toEqual(['audit_busy', 'not_owner', 'service_unavailable', 'timeout']);
  });

  it('calls missing things and wrong input permanent, never a 5xx or a limit', () => {
    const permanent = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => isPermanent(new AppError(c)));
    expect(permanent).toEqual(
      expect.arrayContaining([
        'not_found',
        'validation_failed',
        'invalid_state',
        'spreadsheet_rejected',
        'import_not_found',
      ]),
    );
    for (const c of permanent) expect(ERROR_CODES[c].status).toBeLessThan(500);
    expect(permanent).not.toContain('rate_limited');
    expect(permanent).not.toContain('conflict');
  });

  it('gives no answer for errors without a code', () => {
    expect(isTransient(new Error('timeout'))).toBe(false);
    expect(isPermanent(Object.assign(new Error('x'), { code: 'not_found' }))).toBe(false);
  });
});

describe('database failures of the driver', () => {
  it('answers 503 service_unavailable for every way the driver says the server cannot be reached', async () => {
    const mongodb = await import('mongodb');
    // A server-monitor timeout clears the pool: operations in flight fail with these (seen at 100k users).
    const { PoolClearedError, PoolClearedOnNetworkError } = createRequire(import.meta.url)(
      'mongodb/lib/cmap/errors.js',
    ) as Record<string, new (pool: { address: string }) => Error>;
    const thrown = [
      new PoolClearedError!({ address: '127.0.0.1:1' }),
      new PoolClearedOnNetworkError!({ address: '127.0.0.1:1' }),
      new mongodb.MongoNetworkTimeoutError('socket timed out'),
      new mongodb.MongoNetworkError('connection reset'),
      new mongodb.MongoServerSelectionError('no server', {
        type: 'Unknown',
        servers: new Map(),
        stale: false,
        compatible: true,
        heartbeatFrequencyMS: 10000,
        localThresholdMS: 15,
        setName: null,
        maxElectionId: null,
        maxSetVersion: null,
        commonWireVersion: 0,
        logicalSessionTimeoutMinutes: null,
      } as never),
      new mongodb.MongoTopologyClosedError(),
    ];
    for (const e of thrown)
      expect({ name: e.name, code: toAppError(e).code, status: toAppError(e).status }).toEqual({
        name: e.name,
        code: 'service_unavailable',
        status: 503,
      });
    expect(toAppError(new Error('boom')).code).toBe('internal');
  });
});
