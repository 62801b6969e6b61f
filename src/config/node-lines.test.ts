import { describe, expect, it } from '@jest/globals';
import { packageEngines, supportedLines, unsupportedNodeNote } from './node-lines.js';

describe('supported Node.js lines (decision 831)', () => {
  const engines = packageEngines();

  it('reads them from package.json engines: the LTS lines 22 and 24', () => {
    expect(supportedLines(engines).map((l) => l.major)).toEqual([22, 24]);
  });

  it('accepts releases of a supported line from its first supported one, and nothing else', () => {
    expect(unsupportedNodeNote('v24.21.0', engines)).toBeUndefined();
    expect(unsupportedNodeNote('v22.23.3', engines)).toBeUndefined();
    expect(unsupportedNodeNote('v22.15.0', engines)).toBeUndefined();
    expect(unsupportedNodeNote('v22.14.9', engines)).toMatch(/22\.14\.9 is not a supported release/);
    expect(unsupportedNodeNote('v20.20.2', engines)).toMatch(/^Node\.js 20\.20\.2 .* 22 \(from 22\.15\.0\), 24/);
    expect(unsupportedNodeNote('v26.10.0', engines)).toBeDefined();
  });
});
