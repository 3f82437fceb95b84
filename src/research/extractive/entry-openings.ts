import { splitSentences } from '../../shared/sentences.ts';
import { continuesEntry, isStamp } from './block-ties.ts';
import { type Block, PASSAGE_CHARS, together } from './passages.ts';

/**
 * Where a reference entry's passage is quoted from (see passages.ts): an API entry, a setting or a
 * filter says what it is in its first sentence, and the paragraphs after it go on about it ("Uses a
 * similar format…", "When multiple calls to setImmediate() are made…"). A passage chosen from
 * further down is quoted from that sentence.
 */

/** Longest section opening that a paragraph after it brings along. */
const OPENING_CHARS = 240;

/**
 * The paragraph at `index` opens its section in one short sentence (after the section's heading,
 * with nothing before it but a version stamp, a list of parameters or a table of versions), in a
 * section below the page's own (an API entry, a setting, a filter): it says what the entry is
 * ("Schedules the \"immediate\" execution of the callback after I/O events' callbacks."), which the
 * paragraphs after it go on about. A page's own opening is its summary, quoted on its own.
 */
function opensSection(blocks: readonly Block[], index: number): boolean {
  const block = blocks[index];
  if (block?.kind !== 'paragraph' || isStamp(block) || block.text.length > OPENING_CHARS) return false;
  if (!block.headings.includes(' › ')) return false;
  // A sentence, not a label ("Stability: 2 - Stable").
  const text = block.text.trim();
  if (!/[.!?]$/.test(text) || text.split(/\s+/).length < 5 || splitSentences(text).length !== 1) return false;
  for (let at = index - 1; at >= 0; at--) {
    const before = blocks[at]!;
    if (before.kind === 'heading') return before.section === block.section;
    if (before.section !== block.section || before.segment !== block.segment) return false;
    // What an API entry puts above its prose: parameters, a table of versions, and its label ("History").
    const label =
      before.kind === 'paragraph' && !/[.!?:]$/.test(before.text.trim()) && before.text.split(/\s+/).length <= 3;
    if (before.kind !== 'list' && before.kind !== 'table' && !isStamp(before) && !label) return false;
  }
  return false;
}

/**
 * The block a passage is quoted from: the sentence its first paragraph goes on from when that
 * sentence has no subject ("Uses a similar format to PHP's date() function…" after "Formats a date
 * according to the given format."), and its entry's one-sentence opening when it is the paragraph
 * after it (see `opensSection`); its own first block when neither, or when that would make it
 * longer than `PASSAGE_CHARS`. Applied to passages already chosen: what comes along never changes
 * which passages are chosen.
 */
export function entryOpening(blocks: readonly Block[], passage: { first: number; last: number }): number {
  let first = passage.first;
  for (;;) {
    const head = blocks[first]!;
    const before = blocks[first - 1];
    if (!together(head, before) || head.kind !== 'paragraph') break;
    // A sentence without a subject goes on from the sentence before it, never from a list or code.
    const continued = continuesEntry(head) && before.kind === 'paragraph';
    if (!continued && !opensSection(blocks, first - 1)) break;
    if (blocks[passage.last]!.end - before.start > PASSAGE_CHARS) break;
    first -= 1;
  }
  return first;
}
