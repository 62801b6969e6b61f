import { describe, expect, it } from '@jest/globals';
import { silentWav } from './embedded.adapter.js';

describe('embedded recording file', () => {
  it('is a valid PCM WAV whose data length matches the duration', async () => {
    const chunks: Buffer[] = [];
    for await (const c of silentWav(3)) chunks.push(c as Buffer);
    const wav = Buffer.concat(chunks);
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    expect(wav.subarray(8, 16).toString()).toBe('WAVEfmt ');
    expect(wav.readUInt32LE(24)).toBe(8000);
    expect(wav.readUInt32LE(40)).toBe(3 * 8000);
    expect(wav.length).toBe(44 + 3 * 8000);
  });
});
