import { describe, expect, it } from '@jest/globals';
import { withConsents } from './completion.service.js';

const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const row = (userId: string | undefined, key: string) => ({
  participantKey: key,
  userId,
  joinedAt: new Date('2026-11-27T10:00:00Z'),
  leftAt: new Date('2026-11-27T10:30:00Z'),
  durationSeconds: 1800,
});

describe('completion keeps recording consent with the ledger (decision 910)', () => {
  it("puts each participant's answers on their own ledger rows, and none on others'", () => {
    const at = new Date('2026-11-27T10:05:00Z');
    const ledger = withConsents(
      [row(A, 'pa'), row(A, 'pa-2'), row(B, 'pb'), row(undefined, 'guest')],
      [
        { userId: A, requestId: 'r1', consent: true, at, late: false },
        { userId: A, requestId: 'r2', consent: false, at, late: true },
        { userId: 'c'.repeat(24), requestId: 'r1', consent: true, at },
      ],
    );
    const expected = [
      { requestId: 'r1', consent: true, at, late: false },
      { requestId: 'r2', consent: false, at, late: true },
    ];
    expect(ledger[0]!.recordingConsents).toEqual(expected);
    expect(ledger[1]!.recordingConsents).toEqual(expected);
    expect(ledger[2]!.recordingConsents).toBeUndefined();
    expect(ledger[3]!.recordingConsents).toBeUndefined();
  });
});
