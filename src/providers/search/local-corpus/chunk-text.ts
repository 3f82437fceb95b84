import type { PassageInput } from '../../../store/store.ts';
import { linkDensity } from '../../extract/extracted-document.ts';

export interface ChunkOptions {
  /** Passages grow by whole paragraphs, under one heading, until about this many characters. Default 900. */
  targetChars?: number;
  /** A paragraph longer than this is cut at sentence ends. Default 1600. */
  maxChars?: number;
  /** Character ranges of link text in `text` (from extraction), for each passage's link density. */
  linkRanges?: readonly [number, number][];
}

interface Block {
  start: number;
  end: number;
  text: string;
  /** The heading path in force for the block. */
  headings: string;
  /**
   * A heading line: it starts a new passage, whatever its level, so an entry of a definition list
   * (a glossary term, an API member, an option) is a passage of its own, found for what it names.
   */
  heading: boolean;
}

const headingPattern = /^(#{1,6})\s+(.+?)\s*#*$/;
/**
 * A definition list's term (an option, a function, a glossary entry): extraction writes each as a
 * level-5 heading. Terms in a row share the description after the last (see `chunkText`).
 */
const TERM_LEVEL = 5;

/** Heading text as a search field: no Markdown, no backticks. */
function headingText(raw: string): string {
  return raw.replace(/`/g, '').replace(/\s+/g, ' ').trim();
}

/**
 * Blocks of the text with their offsets: paragraphs (blank-line separated), fenced code blocks
 * whole, and heading lines on their own, each with the heading path above it.
 */
function blocks(text: string): Block[] {
  const result: Block[] = [];
  const stack: { level: number; text: string }[] = [];
  const path = () => stack.map((entry) => entry.text).join(' › ');
  let current: { start: number; lines: string[] } | null = null;
  let offset = 0;
  let fenced = false;
  const flush = (end: number) => {
    if (!current) return;
    const body = current.lines.join('\n');
    const trimmed = body.trim();
    if (trimmed) {
      const start = current.start + body.indexOf(trimmed);
      result.push({
        start,
        end: start + trimmed.length,
        text: trimmed,
        headings: path(),
        heading: false,
      });
    }
    current = null;
    void end;
  };
  for (const line of text.split('\n')) {
    const lineStart = offset;
    offset += line.length + 1;
    if (line.trimStart().startsWith('```')) {
      if (!current) current = { start: lineStart, lines: [] };
      current.lines.push(line);
      fenced = !fenced;
      if (!fenced) flush(offset);
      continue;
    }
    if (fenced) {
      current?.lines.push(line);
      continue;
    }
    const heading = headingPattern.exec(line);
    if (heading) {
      flush(lineStart);
      const level = heading[1]!.length;
      const top = stack.at(-1);
      // Terms in a row with nothing between them name one entry ("-n, --dry-run").
      if (level === TERM_LEVEL && top?.level === level && result.at(-1)?.heading)
        top.text = `${top.text}, ${headingText(heading[2]!)}`;
      else {
        while (stack.length > 0 && stack.at(-1)!.level >= level) stack.pop();
        stack.push({ level, text: headingText(heading[2]!) });
      }
      result.push({
        start: lineStart,
        end: lineStart + line.length,
        text: line.trim(),
        headings: path(),
        heading: true,
      });
      continue;
    }
    if (line.trim() === '') {
      flush(lineStart);
      continue;
    }
    if (!current) current = { start: lineStart, lines: [] };
    current.lines.push(line);
  }
  flush(offset);
  return result;
}

/** A block made of lines that mean nothing apart: a fenced code block, a note box (`>` lines). */
function isLineBlock(block: Block): boolean {
  return block.text.startsWith('```') || block.text.startsWith('>');
}

/**
 * Cuts a long block at sentence ends (or hard at `maxChars`), keeping offsets. Code and note boxes
 * are kept whole up to three times as long, and past that cut only between lines, so a piece of a
 * note keeps its `>` and is never read as prose.
 */
function splitLong(block: Block, maxChars: number): Block[] {
  if (block.text.length <= maxChars) return [block];
  if (isLineBlock(block)) {
    if (block.text.length <= 3 * maxChars) return [block];
    const pieces: Block[] = [];
    let from = 0;
    while (from < block.text.length) {
      let to = Math.min(block.text.length, from + maxChars);
      if (to < block.text.length) {
        const newline = block.text.lastIndexOf('\n', to);
        if (newline > from) to = newline;
      }
      const piece = block.text.slice(from, to).replace(/^\n+/, '');
      const at = block.start + block.text.indexOf(piece, from);
      if (piece.trim()) pieces.push({ ...block, start: at, end: at + piece.length, text: piece });
      from = to;
    }
    return pieces;
  }
  const pieces: Block[] = [];
  let start = 0;
  const text = block.text;
  while (start < text.length) {
    let end = Math.min(text.length, start + maxChars);
    if (end < text.length) {
      const window = text.slice(start, end);
      const sentenceEnd = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '));
      if (sentenceEnd > maxChars / 3) end = start + sentenceEnd + 1;
    }
    const piece = text.slice(start, end);
    const trimmed = piece.trim();
    if (trimmed) {
      const at = block.start + start + piece.indexOf(trimmed);
      pieces.push({ ...block, start: at, end: at + trimmed.length, text: trimmed });
    }
    start = end;
  }
  return pieces;
}

/**
 * The level of a text that is one heading line, or a run of heading lines of one level (1 to 6); 0
 * for any other text.
 */
function headingLevel(text: string): number {
  const lines = text.split('\n').filter((line) => line.trim());
  const levels = new Set(lines.map((line) => headingPattern.exec(line)?.[1]?.length ?? 0));
  return levels.size === 1 ? [...levels][0]! : 0;
}

/**
 * Splits extracted text into passages of whole paragraphs under one heading: a heading always
 * starts a new passage, and each passage carries its heading path (a search field of its own) and
 * its link density, with its character offsets in the text so a citation points at the place.
 */
export function chunkText(text: string, options: ChunkOptions = {}): PassageInput[] {
  const target = options.targetChars ?? 900;
  const max = options.maxChars ?? 1600;
  const ranges = options.linkRanges ?? [];
  const passages: PassageInput[] = [];
  type Open = Omit<PassageInput, 'linkDensity'>;
  let current: Open | null = null;
  const push = () => {
    const open = current as Open | null;
    if (open?.text.trim()) passages.push({ ...open, linkDensity: linkDensity(ranges, open.start, open.end) });
    current = null;
  };
  for (const block of blocks(text).flatMap((each) => splitLong(each, max))) {
    const open = current as Open | null;
    // Blocks after a heading share its path; a heading always starts a new passage, unless the
    // passage so far is a definition term with nothing under it: terms in a row that share one
    // description (Texinfo's `@deffnx`: "Builtin: include (file)" and "Builtin: sinclude
    // (file)" above one text) are one entry, and the first is never lost.
    const fits = open && !block.heading && open.text.length + block.text.length + 2 <= target;
    if (open && block.heading && headingLevel(open.text) === TERM_LEVEL && headingLevel(block.text) === TERM_LEVEL) {
      current = { ...open, end: block.end, text: text.slice(open.start, block.end), headings: block.headings };
    } else if (!fits) {
      push();
      current = { start: block.start, end: block.end, text: block.text, headings: block.headings };
    } else if (open) {
      current = { ...open, end: block.end, text: `${open.text}\n\n${block.text}` };
    }
  }
  push();
  // A heading with nothing under it before the next heading is folded into nothing: it says no more than its field.
  return passages.filter((passage) => headingLevel(passage.text) === 0);
}

/** True when most of the text (not counting white space) is link text: an index, a table of contents. */
export function isNavigationText(text: string, ranges: readonly [number, number][]): boolean {
  const visible = text.replace(/\s/g, '').length;
  if (visible < 40) return false;
  let linked = 0;
  for (const [from, to] of ranges) linked += text.slice(from, to).replace(/\s/g, '').length;
  return linked / visible > 0.6;
}
