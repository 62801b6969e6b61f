import { afterAll, describe, expect, it } from '@jest/globals';
import { QrRenderer } from './qr-renderer.js';

describe('QrRenderer bounds', () => {
  const r = new QrRenderer();
  afterAll(() => r.close());
  const opts = { errorCorrectionLevel: 'M' as const, margin: 1, width: 120 };

  it("refuses renders past a key's bound at once, leaves other keys alone, and frees the key when they finish", async () => {
    const bound = [{ key: 'a:1.2.3.4', limit: 2 }];
    const calls = Array.from({ length: 5 }, (_, i) =>
      r.render(`https://x.example/${i}`, opts, bound).then(
        () => 'ok',
        (e: { code?: string }) => e.code,
      ),
    );
    expect(r.inFlightFor('a:1.2.3.4')).toBe(2);
    const other = r.render('https://x.example/other', opts, [{ key: 'a:5.6.7.8', limit: 2 }]);
    expect(await Promise.all(calls)).toEqual(['ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited']);
    await expect(other).resolves.toMatch(/^data:image\/png;base64,/);
    expect(r.inFlightFor('a:1.2.3.4')).toBe(0);
    await expect(r.render('https://x.example/again', opts, bound)).resolves.toMatch(/^data:image\/png;base64,/);
  });
});

describe('QrRenderer worker', () => {
  const refCount = (type: string) => process.getActiveResourcesInfo().filter((x) => x === type).length;

  it('renders on its worker without keeping the process alive', async () => {
    const before = refCount('MessagePort');
    const qr = new QrRenderer();
    try {
      const url = await qr.render('https://acme.localhost/join', { errorCorrectionLevel: 'M', margin: 1, width: 128 });
      expect(url.startsWith('data:image/png;base64,')).toBe(true);
      // The worker stays for later renders but unref'd: a node that rendered a code still exits on its own.
      expect(refCount('MessagePort')).toBe(before);
    } finally {
      await qr.close();
    }
  });
});
