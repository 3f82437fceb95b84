import { describe, expect, it } from 'vitest';
import { extractJson } from './structured-call.ts';

describe('extractJson', () => {
  it('finds the object in a fence, in prose, or nowhere', () => {
    expect(extractJson('Sure:\n```json\n{"a": 1}\n```\nBye')).toBe('{"a": 1}');
    expect(extractJson('Here: {"a": {"b": "}"}} and more {"c": 2}')).toBe('{"a": {"b": "}"}}');
    expect(extractJson('no json here')).toBeNull();
    expect(extractJson('{"unclosed": 1')).toBeNull();
  });
});
