import { describe, expect, it } from '@jest/globals';
import { AppError, ERROR_CODES, isPermanent, isTransient, type ErrorCode } from './errors.js';

describe('error catalogue: what repeating an operation can do', () => {
  it('calls routing and availability failures transient, and nothing else', () => {
    const transient = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => isTransient(new AppError(c)));
    expect(transient.sort()).toEqual(['not_owner', 'service_unavailable', 'timeout']);
  });

  it('calls missing things and wrong input permanent, never a 5xx or a limit', () => {
    const permanent = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => isPermanent(new AppError(c)));
    expect(permanent).toEqual(expect.arrayContaining(['not_found', 'validation_failed', 'invalid_state', 'spreadsheet_rejected', 'import_not_found']));
    for (const c of permanent) expect(ERROR_CODES[c].status).toBeLessThan(500);
    expect(permanent).not.toContain('rate_limited');
    expect(permanent).not.toContain('conflict');
  });

  it('gives no answer for errors without a code', () => {
    expect(isTransient(new Error('timeout'))).toBe(false);
    expect(isPermanent(Object.assign(new Error('x'), { code: 'not_found' }))).toBe(false);
  });
});
