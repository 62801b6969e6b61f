import { afterAll, describe, expect, it } from '@jest/globals';
import { QrRenderer } from './qr-renderer.js';

describe('QrRenderer bounds', () => {
  const r = new QrRenderer();
  afterAll(() => r.close());
  const opts = { errorCorrectionLevel: 'M' as const, margin: 1, width: 120 };

  it('refuses renders past a key\'s bound at once, leaves other keys alone, and frees the key when they finish', async () => {
    const bound = [{ key: 'a:1.2.3.4', limit: 2 }];
    const calls = Array.from({ length: 5 }, (_, i) => r.render(`https://x.example/${i}`, opts, bound).then(() => 'ok', (e: { code?: string }) => e.code));
    expect(r.inFlightFor('a:1.2.3.4')).toBe(2);
    const other = r.render('https://x.example/other', opts, [{ key: 'a:5.6.7.8', limit: 2 }]);
    expect(await Promise.all(calls)).toEqual(['ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited']);
    await expect(other).resolves.toMatch(/^data:image\/png;base64,/);
    expect(r.inFlightFor('a:1.2.3.4')).toBe(0);
    await expect(r.render('https://x.example/again', opts, bound)).resolves.toMatch(/^data:image\/png;base64,/);
  });
});
