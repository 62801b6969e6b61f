import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { controlCharPath, refuseControlChars } from './text-input.js';

/** The rule by its definition, one string at a time, with the path of the first hit in document order. */
const CONTROL =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function anyControl(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return CONTROL.test(value);
  if (value === null || typeof value !== 'object' || depth >= 64 || Buffer.isBuffer(value)) return false;
  return Object.entries(value).some(([k, v]) => CONTROL.test(k) || anyControl(v, depth + 1));
}

/** Text with the characters the rule is about: controls, tab and line breaks, lone and paired surrogates. */
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('\u0000', '\u0007', '\t', '\n', '\r', '\u001f', '\u007f', '\ud83d', '\ude00', '\ud83d\ude00', 'é'),
    fc.string({ minLength: 1, maxLength: 1 }),
  ),
  maxLength: 6,
});
const input = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.constant(null),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(text, tie('node'), { maxKeys: 4 }),
  ),
})).node;

describe('control characters in text input', () => {
  it('are found exactly where the rule finds them, in keys and values at any depth', () => {
    fc.assert(
      fc.property(input, (value) => {
        expect(controlCharPath(value) !== undefined).toBe(anyControl(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('name the field that holds one', () => {
    expect(controlCharPath([{ eventId: 'ok', note: { text: 'a\u0000b' } }], 'args')).toBe('args.0.note.text');
    expect(controlCharPath({ ['k\u0007']: 'v' })).toBe('k\u0007');
    expect(controlCharPath('lone \ud83d')).toBe('(value)');
    expect(controlCharPath({ smile: '\ud83d\ude00', tab: 'a\tb\r\n' })).toBeUndefined();
    expect(() => refuseControlChars({ name: 'x\u001f' }, 'body')).toThrow(
      'body.name: must not contain control characters',
    );
  });
});
