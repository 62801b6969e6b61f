import { describe, expect, it } from '@jest/globals';
import { Schema } from 'mongoose';
import { fillDefaults } from './read-defaults.js';

describe('lean-read defaults', () => {
  const schema = new Schema({
    tags: [String],
    cap: { type: [String], default: undefined },
    kind: { type: String, default: 'person' },
    note: String,
  });

  it('gives a missing array [] and a missing field its default', () => {
    const doc: Record<string, unknown> = {};
    fillDefaults(schema, doc);
    expect(doc).toEqual({ tags: [], kind: 'person' });
  });

  it('leaves absent a field whose schema says `default: undefined` (absent and empty differ: a permission cap)', () => {
    const doc: Record<string, unknown> = { tags: ['a'] };
    fillDefaults(schema, doc);
    expect('cap' in doc).toBe(false);
    const capped: Record<string, unknown> = { cap: [] };
    fillDefaults(schema, capped);
    expect(capped.cap).toEqual([]);
  });
});
