import { describe, expect, it } from '@jest/globals';
import { pinWeakness } from './pin-rules.js';

describe('pinWeakness', () => {
  it.each([
    '0000',
    '111111',
    '123456',
    '1234',
    '4321',
    '0123',
    '9876',
    '7890',
    '8901',
    '0987',
    '2468',
    '1357',
    '9630',
    '1212',
    '123123',
    '100100',
    'abcd',
    'aaaa',
  ])('refuses %s', (pin) => expect(pinWeakness(pin)).toEqual(expect.any(String)));
  it.each(['4927', '8305', '6172', '482913', '1235', '1122', '2580', '12', '1', 'a1b2'])('accepts %s', (pin) =>
    expect(pinWeakness(pin)).toBeUndefined(),
  );
});
