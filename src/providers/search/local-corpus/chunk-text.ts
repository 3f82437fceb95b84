import type { PassageInput } from '../../../store/store.ts';

export interface ChunkOptions {
  /** Passages grow by whole paragraphs until about this many characters. Default 900. */
  targetChars?: number;
  /** A paragraph longer than this is cut at sentence ends. Default 1600. */
  maxChars?: number;
}

/** Paragraphs (blank-line separated) with their offsets in `text`. */
function paragraphs(text: string): PassageInput[] {
  const result: PassageInput[] = [];
  const pattern = /[^\n]+(?:\n(?!\s*\n)[^\n]*)*/g;
  for (const match of text.matchAll(pattern)) {
    const body = match[0].trim();
    if (body) result.push({ start: match.index!, end: match.index! + match[0].length, text: body });
  }
  return result;
}

/** Cuts a long paragraph at sentence ends (or hard at `maxChars`), keeping offsets. */
function splitLong(paragraph: PassageInput, maxChars: number): PassageInput[] {
  if (paragraph.text.length <= maxChars) return [paragraph];
  const pieces: PassageInput[] = [];
  let start = 0;
  const text = paragraph.text;
  while (start < text.length) {
    let end = Math.min(text.length, start + maxChars);
    if (end < text.length) {
      const window = text.slice(start, end);
      const sentenceEnd = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '));
      if (sentenceEnd > maxChars / 3) end = start + sentenceEnd + 1;
    }
    const piece = text.slice(start, end).trim();
    if (piece) pieces.push({ start: paragraph.start + start, end: paragraph.start + end, text: piece });
    start = end;
  }
  return pieces;
}

/**
 * Splits extracted text into passages of whole paragraphs, each with its character offsets in the
 * text, so a citation can point to the exact place.
 */
export function chunkText(text: string, options: ChunkOptions = {}): PassageInput[] {
  const target = options.targetChars ?? 900;
  const max = options.maxChars ?? 1600;
  const passages: PassageInput[] = [];
  let current: PassageInput | null = null;
  for (const paragraph of paragraphs(text).flatMap((each) => splitLong(each, max))) {
    if (current && current.text.length + paragraph.text.length + 2 <= target) {
      current = { start: current.start, end: paragraph.end, text: `${current.text}\n\n${paragraph.text}` };
    } else {
      if (current) passages.push(current);
      current = paragraph;
    }
  }
  if (current) passages.push(current);
  return passages;
}
