import { describe, expect, it } from '@jest/globals';
import { judgeKeys, shapeOf, type ShapeFigures } from './fleet-census.js';

const f = (count: number, lasting: number, maxTtlMs: number): ShapeFigures => ({ count, lasting, maxTtlMs });

describe("the fleet day's key judgement", () => {
  it('counts keys of one kind together', () => {
    expect(shapeOf('p:actors:{s3}:snap:acme/call/0b3c6a0e-1f2d-4c5b-9a8e-7d6c5b4a3f21', 'p:')).toBe(
      'actors:{s<n>}:snap:acme/call/<uuid>',
    );
    expect(shapeOf('p:vcs:recording:emb_0123456789abcdef0123456789abcdef', 'p:')).toBe('vcs:recording:emb_<hex>');
    expect(shapeOf('p:push:{acme:d:HS-FLEET-12}:pos', 'p:')).toBe('push:{acme:d:HS-FLEET-<n>}:pos');
  });

  it('passes keys that expire within the window and kept records within their bound, and names the rest', () => {
    const before = new Map([['push:{acme:u:<id>}:pos', 3]]);
    const after = new Map([
      ['push:{acme:u:<id>}:pos', f(10, 0, 60_000)],
      ['actors:{s<n>}:dedupe:acme/call/<uuid>:<uuid>', f(40, 0, 120_000)],
      ['actors:{s<n>}:snap:acme/call/<uuid>', f(30, 0, 600_000)],
      ['actors:{s<n>}:snap:acme/meeting/<id>', f(12, 12, 0)],
      ['actors:{s<n>}:lease', f(16, 0, 1_500)],
      ['session:<sid>', f(5, 0, 30 * 86_400_000)],
      ['rl:hub:<n>', f(2, 2, 0)],
    ]);
    const retained = [{ shape: /^actors:\{s<n>\}:snap:acme\/meeting\//, by: 'one per event', max: 12 }];
    const v = judgeKeys(before, after, 600_000, retained);
    expect(Object.keys(v.expiring).sort()).toEqual([
      'actors:{s<n>}:dedupe:acme/call/<uuid>:<uuid>',
      'actors:{s<n>}:lease',
      'actors:{s<n>}:snap:acme/call/<uuid>',
      'push:{acme:u:<id>}:pos',
    ]);
    expect(v.expiring['push:{acme:u:<id>}:pos']).toEqual({ count: 7, maxTtlMs: 60_000 });
    expect(Object.keys(v.leaked).sort()).toEqual(['rl:hub:<n>', 'session:<sid>']);
    expect(v.retained).toEqual({ [String(retained[0]!.shape)]: '12 of at most 12 (one per event)' });
  });

  it('names snapshots of calls that do not expire: no call snapshot is a kept record', () => {
    const v = judgeKeys(new Map(), new Map([['actors:{s<n>}:snap:acme/call/<uuid>', f(13, 2, 600_000)]]), 600_000, [
      { shape: /^actors:\{s<n>\}:snap:acme\/meeting\//, by: 'one per event', max: 12 },
    ]);
    expect(v.leaked).toEqual({
      'actors:{s<n>}:snap:acme/call/<uuid>': { count: 13, lasting: 2, maxTtlMs: 600_000, before: 0 },
    });
  });

  it('bounds the kept records that stay: meeting snapshots that expire within the window count for nothing', () => {
    const meetings = /^actors:\{s<n>\}:snap:acme\/meeting\//;
    const judge = (figures: ShapeFigures) =>
      judgeKeys(new Map(), new Map([['actors:{s<n>}:snap:acme/meeting/<id>', figures]]), 600_000, [
        { shape: meetings, by: 'one per event not ended', max: 8 },
      ]);
    // 12 ended meetings retired their snapshots, 8 live ones keep theirs.
    expect(judge(f(20, 8, 600_000))).toMatchObject({
      leaked: {},
      retained: { [String(meetings)]: '8 of at most 8 (one per event not ended)' },
    });
    expect(Object.keys(judge(f(20, 9, 600_000)).leaked)).toEqual([String(meetings)]);
    // An expiry beyond the window is no expiry the day can wait for: every key counts.
    expect(judge(f(20, 8, 700_000)).leaked).toEqual({
      [String(meetings)]: { count: 20, lasting: 20, maxTtlMs: -1, before: 8 },
    });
  });

  it('names kept records past their bound', () => {
    const v = judgeKeys(new Map(), new Map([['actors:{s<n>}:snap:acme/call/<uuid>', f(13, 13, 0)]]), 600_000, [
      { shape: /snap:acme\/call\//, by: 'one per call placed', max: 12 },
    ]);
    expect(v.leaked).toEqual({ [String(/snap:acme\/call\//)]: { count: 13, lasting: 13, maxTtlMs: -1, before: 12 } });
  });
});
