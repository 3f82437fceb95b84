import { documentOffset } from '../quotes.ts';
import type { SourceText } from '../research-types.ts';
import { announces, hasCallouts, isCaveat, leansBack } from './block-ties.ts';

/**
 * A source's text as its author wrote it: blocks (a paragraph, a list, a code block, a table, a note
 * box), each in its section, and the passages a report may quote — one block or a few that belong
 * together, never a piece of one. What a passage cannot be read without comes with it: the block it
 * leans on ("This…", "It…", "Otherwise…"), what its lead-in announces ("as follows:"), the code
 * block's explanation, and the caveat right after it (a note box, "However…", "This program fails
 * because…"). A passage's text is a slice of the source's text: quoting it is quoting the source.
 */

export type BlockKind = 'paragraph' | 'list' | 'code' | 'table' | 'note' | 'heading';

export interface Block {
  kind: BlockKind;
  /** The block's Markdown, exactly as in the source's text. */
  text: string;
  /** Offsets in the source's text. */
  start: number;
  end: number;
  /** The section's heading path ("Chapter › Section"), and a number that changes at every heading. */
  headings: string;
  section: number;
  /** The segment of the source's text it lies in (a passage of the document), and the one after the last gap. */
  segment: number;
}

/**
 * Longest passage quoted, in characters, not counting the caveats after it: a passage that would
 * need more is not quoted at all. A caveat (a note box, a "however…" paragraph) is never why a
 * passage cannot be quoted: with its caveats a passage may reach `2 × PASSAGE_CHARS`.
 */
export const PASSAGE_CHARS = 2400;
/** A section this small (and of this few blocks) may be quoted whole. */
const SECTION_CHARS = 1400;
const SECTION_BLOCKS = 5;

const listItem = /^\s*(?:[-*+]|\d+[.)])\s+\S/;
const headingLine = /^(#{1,6})\s+(.+?)\s*#*$/;

/** The source's text split into its segments (passages of the document), with where each starts. */
function segmentsOf(source: SourceText): { at: number; end: number; headings: string; start: number }[] {
  const segments = source.segments?.length
    ? source.segments
    : [{ at: 0, start: source.offset, headings: source.headings ?? '' }];
  return segments.map((segment, index) => ({
    ...segment,
    end: index + 1 < segments.length ? segments[index + 1]!.at : source.text.length,
  }));
}

/**
 * How many characters of the document lie between two segments (-1 when they are not neighbours):
 * a passage may run from one into the other when they are, and a gap of one or none means the
 * index cut a block in two there (a long paragraph at a sentence's end, a long note between lines).
 * Up to four characters (a blank line) anywhere; up to eight under the same headings, where the
 * index cut before a nested list and left out its indentation (Git's "…to have finer grained
 * access:" and the list of what it means).
 */
function gapBetween(
  source: SourceText,
  first: { at: number; end: number; start: number; headings: string },
  second: { start: number; headings: string },
): number {
  const length = source.text.slice(first.at, first.end).trimEnd().length;
  const gap = second.start - (first.start + length);
  const limit = first.headings === second.headings ? 8 : 4;
  return gap >= 0 && gap <= limit ? gap : -1;
}

/** True when a code block's text ends with its closing fence (it opens with one). */
function closesFence(text: string): boolean {
  return (text.match(/^\s*```/gm) ?? []).length >= 2;
}

/** A definition list's term (an option, a function, a glossary entry): extraction writes each as a level-5 heading. */
export const TERM_LEVEL = 5;

/**
 * The heading path above a segment's own headings: a segment that opens with terms in a row sharing
 * one description ("-n", "--dry-run") is filed under them ("… › -n, --dry-run"), and its headings
 * make that entry again below the path above them.
 */
function pathAbove(headings: string, lines: readonly string[]): string {
  const run: string[] = [];
  let level = 0;
  for (const line of lines) {
    if (!line.trim()) continue;
    const heading = headingLine.exec(line.trim());
    if (!heading || (level > 0 && heading[1]!.length !== level)) break;
    level = heading[1]!.length;
    run.push(heading[2]!.replace(/`/g, '').trim());
  }
  if (run.length < 2 || level !== TERM_LEVEL) return headings;
  // Filed under all of them (as the index now files them), or under the last (as it did before).
  for (const entry of [run.join(', '), run.at(-1)!]) {
    if (headings === entry) return '';
    if (headings.endsWith(` › ${entry}`)) return headings.slice(0, -` › ${entry}`.length);
  }
  return headings;
}

/**
 * The blocks of a source's text, in order. Headings are blocks too (they are never quoted; they
 * start a new section). A note box is a blockquote (`> …` lines); a list runs over its items and
 * their indented lines; a table is its `|` rows.
 */
export function blocksOf(source: SourceText): Block[] {
  const blocks: Block[] = [];
  const stack: { level: number; text: string }[] = [];
  let section = 0;
  let segmentIndex = 0;
  const segments = segmentsOf(source);
  for (const [index, segment] of segments.entries()) {
    const gap = index > 0 ? gapBetween(source, segments[index - 1]!, segment) : -1;
    if (index > 0 && gap === -1) segmentIndex += 1;
    // The block the index cut in two at this segment's start is one block again.
    const cutBefore = gap === 0 || gap === 1 ? blocks.length : -1;
    // A segment knows its own heading path; the headings inside it extend that path.
    stack.length = 0;
    const lines = source.text.slice(segment.at, segment.end).split('\n');
    const base = pathAbove(segment.headings, lines);
    let offset = segment.at;
    let at = 0;
    const lineStart: number[] = [];
    for (const line of lines) {
      lineStart.push(offset);
      offset += line.length + 1;
    }
    const path = () => [base, ...stack.map((entry) => entry.text)].filter(Boolean).join(' › ');
    // A code block the index cut in two goes on at this segment's start without its fence: its
    // lines are code up to the closing fence ("# a comment" is no heading).
    let continuing =
      cutBefore > 0 && blocks[cutBefore - 1]!.kind === 'code' && !closesFence(blocks[cutBefore - 1]!.text);
    const push = (kind: BlockKind, from: number, to: number) => {
      const start = lineStart[from]!;
      const end = lineStart[to]! + lines[to]!.length;
      const text = source.text.slice(start, end);
      if (!text.trim()) return;
      blocks.push({ kind, text, start, end, headings: path(), section, segment: segmentIndex });
    };
    while (at < lines.length) {
      const line = lines[at]!;
      const trimmed = line.trim();
      if (!trimmed) {
        at += 1;
        continue;
      }
      const heading = continuing ? null : headingLine.exec(trimmed);
      if (heading) {
        const text = heading[2]!.replace(/`/g, '').trim();
        const level = heading[1]!.length;
        const top = stack.at(-1);
        // Definition terms in a row with nothing between them name one entry ("-n, --dry-run"), as
        // the index files it.
        if (
          level === TERM_LEVEL &&
          top?.level === level &&
          blocks.at(-1)?.kind === 'heading' &&
          blocks.at(-1)!.section === section
        )
          top.text = `${top.text}, ${text}`;
        // The segment's first heading is the last part of its path already.
        else if (!(at === 0 && (base === text || base.endsWith(` › ${text}`)))) {
          while (stack.length > 0 && stack.at(-1)!.level >= level) stack.pop();
          stack.push({ level, text });
        }
        section += 1;
        push('heading', at, at);
        at += 1;
        continue;
      }
      const first = at;
      let kind: BlockKind = 'paragraph';
      if (continuing) {
        kind = 'code';
        continuing = false;
        while (at < lines.length - 1 && !lines[at]!.trim().startsWith('```')) at += 1;
      } else if (trimmed.startsWith('```')) {
        kind = 'code';
        at += 1;
        while (at < lines.length && !lines[at]!.trim().startsWith('```')) at += 1;
        at = Math.min(at, lines.length - 1);
      } else if (trimmed.startsWith('>')) {
        kind = 'note';
        while (at + 1 < lines.length && lines[at + 1]!.trim().startsWith('>')) at += 1;
      } else if (trimmed.startsWith('|')) {
        kind = 'table';
        while (at + 1 < lines.length && lines[at + 1]!.trim().startsWith('|')) at += 1;
      } else if (listItem.test(line)) {
        kind = 'list';
        // Items, their indented lines, and blank lines between them.
        for (;;) {
          let next = at + 1;
          while (next < lines.length && !lines[next]!.trim()) next += 1;
          if (next >= lines.length) break;
          const following = lines[next]!;
          const continues = next === at + 1 ? !/^\s*(?:```|#|\||>)/.test(following) : /^\s{2,}\S/.test(following);
          if (!(listItem.test(following) || continues)) break;
          at = next;
        }
      } else {
        while (at + 1 < lines.length) {
          const next = lines[at + 1]!;
          if (!next.trim() || /^\s*(?:```|#{1,6}\s|\||>)/.test(next) || listItem.test(next)) break;
          at += 1;
        }
      }
      push(kind, first, at);
      at += 1;
    }
    const previous = blocks[cutBefore - 1];
    const next = blocks[cutBefore];
    if (cutBefore > 0 && previous && next && previous.kind === next.kind && previous.kind !== 'heading') {
      const joiner = gap === 0 ? '' : previous.kind === 'paragraph' ? ' ' : '\n';
      // (The gap counts from the segment's text without its trailing blank lines, which a code block
      // left open at its end holds.)
      const text = `${previous.text.trimEnd()}${joiner}${next.text}`;
      blocks.splice(cutBefore - 1, 2, { ...previous, text, end: next.end });
    }
  }
  return blocks;
}

/**
 * The text of blocks `first` to `last` as the document has it: each block's own text, and between
 * two blocks what the source holds between them.
 */
export function passageText(source: SourceText, blocks: readonly Block[], first: number, last: number): string {
  let text = blocks[first]!.text;
  for (let index = first + 1; index <= last; index++) {
    const between = source.text.slice(blocks[index - 1]!.end, blocks[index]!.start);
    text += `${/\S/.test(between) ? '\n\n' : between}${blocks[index]!.text}`;
  }
  return text;
}

/** A passage: consecutive blocks of one section, quoted together. */
export interface Passage {
  /** Index of its first and last block in `blocks`. */
  first: number;
  last: number;
  /** The source's text from the first block's start to the last block's end (a block the index cut in two, whole). */
  text: string;
  start: number;
  end: number;
  headings: string;
  /** The whole section (under its heading), not a part of it. */
  wholeSection: boolean;
}

/** True when `b` (right after `a`) may be quoted with it: same section, one run of the document. */
export function together(a: Block, b: Block | undefined): b is Block {
  return b !== undefined && b.kind !== 'heading' && a.section === b.section && a.segment === b.segment;
}

/**
 * The smallest run of blocks around `index` that can be quoted: extended back over what its first
 * block leans on (or the lead-in a code block, list or table follows), and forward over what its
 * last block announces, a code block's callout list, and a caveat right after. Null when that run
 * is longer than `PASSAGE_CHARS` (its caveats aside).
 */
export function passageAround(blocks: readonly Block[], index: number): { first: number; last: number } | null {
  const block = blocks[index];
  if (!block || block.kind === 'heading') return null;
  let first = index;
  let last = index;
  // The last block that is not a caveat brought along after the passage's own words.
  let own = index;
  for (let changed = true; changed; ) {
    changed = false;
    const head = blocks[first]!;
    const before = blocks[first - 1];
    if (together(head, before) && before.kind !== 'heading') {
      const leadIn = (head.kind === 'code' || head.kind === 'list' || head.kind === 'table') && announces(before);
      // A code block rarely says what it is for: the paragraph before it does.
      const codeAfterProse = head.kind === 'code' && before.kind === 'paragraph';
      if (leansBack(head) || leadIn || codeAfterProse) {
        first -= 1;
        changed = true;
      }
    }
    const tail = blocks[last]!;
    const after = blocks[last + 1];
    if (together(tail, after)) {
      const announced = announces(tail) && after.kind !== 'paragraph';
      const explained = hasCallouts(tail) && after.kind === 'list';
      // A lead-in that announces a paragraph ("For example:") brings it too.
      const example = announces(tail) && after.kind === 'paragraph' && /:$/.test(tail.text.trim());
      if (announced || explained || example || isCaveat(after)) {
        last += 1;
        if (announced || explained || example) own = last;
        changed = true;
      }
    }
    const start = blocks[first]!.start;
    if (blocks[own]!.end - start > PASSAGE_CHARS || blocks[last]!.end - start > 2 * PASSAGE_CHARS) return null;
  }
  return { first, last };
}

/**
 * Every passage of a source: for each block, the smallest run that can be quoted with it, and each
 * small section whole. Distinct runs only, in document order.
 */
export function passagesOf(source: SourceText, blocks: readonly Block[] = blocksOf(source)): Passage[] {
  const runs = new Map<string, Passage>();
  const add = (first: number, last: number, wholeSection: boolean) => {
    const key = `${first}:${last}`;
    const known = runs.get(key);
    if (known) {
      known.wholeSection ||= wholeSection;
      return;
    }
    const start = blocks[first]!.start;
    const end = blocks[last]!.end;
    runs.set(key, {
      first,
      last,
      text: passageText(source, blocks, first, last),
      start,
      end,
      headings: blocks[first]!.headings,
      wholeSection,
    });
  };
  for (let index = 0; index < blocks.length; index++) {
    const run = passageAround(blocks, index);
    if (run) add(run.first, run.last, false);
  }
  // Small sections whole (a glossary entry, an example with its explanation).
  let from = 0;
  while (from < blocks.length) {
    let to = from;
    while (together(blocks[to]!, blocks[to + 1])) to += 1;
    const first = blocks[from]!.kind === 'heading' ? from + 1 : from;
    if (first <= to) {
      const size = blocks[to]!.end - blocks[first]!.start;
      const count = to - first + 1;
      if (count > 1 && count <= SECTION_BLOCKS && size <= SECTION_CHARS && blocks[from]!.kind === 'heading')
        add(first, to, true);
    }
    from = to + 1;
  }
  return [...runs.values()].sort((a, b) => a.first - b.first || a.last - b.last);
}

/**
 * `passage` without a last block that announces what follows it ("For instance, assume the SSH
 * server doesn't work:"): what it announces is not quoted with it (too long to come along, or not
 * read), and a quote never ends on a lead-in's colon. A lead-in that is all the passage is stays as
 * it is; the analyst takes no note of it.
 */
export function withoutCutLeadIn(source: SourceText, blocks: readonly Block[], passage: Passage): Passage {
  let last = passage.last;
  while (last > passage.first && announces(blocks[last]!)) last -= 1;
  if (last === passage.last) return passage;
  return { ...passage, last, end: blocks[last]!.end, text: passageText(source, blocks, passage.first, last) };
}

/** Most blocks between two passages that are quoted as one, with what lies between them. */
const BRIDGE_BLOCKS = 2;

/**
 * Two passages of one section a few blocks apart, as one passage with the blocks between them (the
 * step between an introduction and its consequence is often the answer itself); null when they are
 * in different sections or runs of the document, too far apart, or together too long to quote.
 */
export function bridge(source: SourceText, blocks: readonly Block[], a: Passage, b: Passage): Passage | null {
  const [before, after] = a.first <= b.first ? [a, b] : [b, a];
  if (after.first <= before.last) return null;
  const gap = after.first - before.last - 1;
  if (gap > BRIDGE_BLOCKS) return null;
  for (let index = before.last; index < after.first; index++)
    if (!together(blocks[index]!, blocks[index + 1])) return null;
  const start = blocks[before.first]!.start;
  const end = blocks[after.last]!.end;
  if (end - start > PASSAGE_CHARS) return null;
  return {
    first: before.first,
    last: after.last,
    text: passageText(source, blocks, before.first, after.last),
    start,
    end,
    headings: before.headings,
    wholeSection: false,
  };
}

/** A passage's offsets in the whole document (through the source's segments). */
export function documentRange(source: SourceText, passage: { start: number; end: number }) {
  return { start: documentOffset(source, passage.start), end: documentOffset(source, passage.end - 1) + 1 };
}

/** A passage's text without its fenced code blocks: what it says, not what its code shows. */
export function withoutCodeBlocks(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}
