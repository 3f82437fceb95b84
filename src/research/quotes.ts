import type { Note, SourceText } from './research-types.ts';

/** Where a quote sits in a text: exactly, else ignoring case, white space and typographic quotes. */
export function locateQuote(text: string, quote: string): { start: number; end: number } | null {
  const wanted = quote.trim();
  if (wanted.length < 8) return null;
  const exact = text.indexOf(wanted);
  if (exact >= 0) return { start: exact, end: exact + wanted.length };
  // Loose: both sides folded the same way, with a map from each folded character back to the text.
  const folded: string[] = [];
  const origin: number[] = [];
  let lastWasSpace = true;
  for (let at = 0; at < text.length; at++) {
    const char = fold(text[at]!);
    if (char === ' ') {
      if (lastWasSpace) continue;
      lastWasSpace = true;
    } else lastWasSpace = false;
    folded.push(char);
    origin.push(at);
  }
  const needle = [...wanted]
    .map(fold)
    .join('')
    .replace(/ +/g, ' ')
    .trim()
    // A quote often drops the sentence's final period or adds one.
    .replace(/[.;,]$/, '');
  if (needle.length < 8) return null;
  const found = folded.join('').indexOf(needle);
  if (found < 0) return null;
  return { start: origin[found]!, end: origin[found + needle.length - 1]! + 1 };
}

function fold(char: string): string {
  if (/\s/.test(char)) return ' ';
  if (char === '’' || char === '‘') return "'";
  if (char === '“' || char === '”') return '"';
  if (char === '–' || char === '—') return '-';
  return char.toLowerCase();
}

/** The offset in the whole document of a position in a source's text (through its segments). */
export function documentOffset(source: SourceText, at: number): number {
  const segment = source.segments?.filter((each) => each.at <= at).at(-1);
  return segment ? segment.start + (at - segment.at) : source.offset + at;
}

/**
 * Checks a note's quote against the text it claims to come from: a quote found there gets its
 * offsets and `verified: true`; one that is not (or a note without a quote) is `verified: false`,
 * and the workflow never cites it.
 */
export function verifyNote(note: Note, source: SourceText): Note {
  // Notes whose analyst placed them itself (extractive notes are the source's own sentences).
  if (note.quote === undefined || note.verified !== undefined) return note;
  const place = locateQuote(source.text, note.quote);
  if (!place) {
    const { start: _start, end: _end, ...rest } = note;
    return { ...rest, verified: false };
  }
  return {
    ...note,
    quote: source.text.slice(place.start, place.end),
    start: documentOffset(source, place.start),
    end: documentOffset(source, place.start) + (place.end - place.start),
    verified: true,
  };
}

/** Notes a report may cite: every note except those whose quote was not found in their source. */
export function citable(notes: readonly Note[]): Note[] {
  return notes.filter((note) => note.verified !== false);
}
