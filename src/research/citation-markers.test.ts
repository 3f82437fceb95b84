import { describe, expect, it } from 'vitest';
import { markerNumbers, newMarkerScan, replaceMarkers } from './citation-markers.ts';
import { CitationStream } from './report-stream.ts';

describe('citation markers (issue 42)', () => {
  const text = [
    'Prose cites [1] and [2, 3].',
    'A code span `argv[1]` is code.',
    '```\nvalues[4] = 5\n```',
    '> A quoted source says [20] of its own.',
    '>',
    '> ```',
    '> buffer[7]',
    '> ```',
    '',
    '— Page › Section [4]',
  ].join('\n');

  it('reads markers in prose only: never in code spans, fenced code or quotes', () => {
    expect(markerNumbers(text)).toEqual([1, 2, 3, 4]);
    const renumbered = replaceMarkers(text, (_match, space: string, list: string) => `${space}[n${list}]`);
    expect(renumbered).toContain('`argv[1]`');
    expect(renumbered).toContain('values[4] = 5');
    expect(renumbered).toContain('says [20] of its own');
    expect(renumbered).toContain('> buffer[7]');
    expect(renumbered).toContain('Section [n4]');
  });

  it('agrees when the text streams in any pieces', () => {
    const order = new Map<number, number>();
    const whole = new CitationStream(new Map(order), () => true);
    const expected = whole.push(text) + whole.end();
    for (const size of [1, 2, 5, 17]) {
      const stream = new CitationStream(new Map(order), () => true);
      let streamed = '';
      for (let at = 0; at < text.length; at += size) streamed += stream.push(text.slice(at, at + size));
      streamed += stream.end();
      expect(streamed, `pieces of ${size}`).toBe(expected);
    }
    expect(expected).toContain('values[4] = 5');
    expect(expected).toContain('says [20] of its own');
  });

  it('carries its state from one piece to the next', () => {
    const state = newMarkerScan();
    expect(replaceMarkers('```\na[1]', () => '', state)).toBe('```\na[1]');
    expect(replaceMarkers('\n```\nafter [1]', () => '', state)).toBe('\n```\nafter');
  });
});
