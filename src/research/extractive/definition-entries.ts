import type { SourceText } from '../research-types.ts';
import { announces } from './block-ties.ts';
import {
  type Block,
  PASSAGE_CHARS,
  type Passage,
  passageAround,
  passageText,
  TERM_LEVEL,
  together,
} from './passages.ts';

/**
 * A definition list's entries quoted with the lead-in that announces them ("Interface summary:",
 * "There are two builtin macros in `m4` for including files:"), so a quote never ends on its colon.
 */

/** A definition list's term (see `TERM_LEVEL`). */
const isTerm = (block: Block | undefined): block is Block =>
  block?.kind === 'heading' && /^#+/.exec(block.text)?.[0].length === TERM_LEVEL;

/**
 * A lead-in ending in a colon right before a definition list ("Interface summary:") announces its
 * entries: the quote goes on over them, each whole (its term and the blocks under it), as many as
 * fit in `PASSAGE_CHARS`, stopping before an entry `blocked` refuses (its first and last block).
 * Returns the new last block. Applied to passages already chosen, so the entries never change which
 * passages are chosen.
 */
export function withEntries(
  blocks: readonly Block[],
  first: number,
  last: number,
  blocked: (from: number, to: number) => boolean = () => false,
): number {
  const tail = blocks[last]!;
  if (!announces(tail) || !/:$/.test(tail.text.trim())) return last;
  const isEntryTerm = (index: number) => isTerm(blocks[index]) && blocks[index]!.segment === tail.segment;
  for (let term = last + 1; isEntryTerm(term); ) {
    // Terms in a row share the description after the last of them (Texinfo's `@deffnx`: "Builtin:
    // include (file)" and "Builtin: sinclude (file)" above one text).
    let lastTerm = term;
    while (isEntryTerm(lastTerm + 1)) lastTerm += 1;
    let end = lastTerm + 1;
    while (together(blocks[lastTerm]!, blocks[end])) end += 1;
    if (end === lastTerm + 1 || blocked(term, end - 1)) break;
    if (blocks[end - 1]!.end - blocks[first]!.start > PASSAGE_CHARS) {
      // A first entry too long to quote whole: its terms and its first passage, so the lead-in
      // never ends the quote on its colon; on to the end of a passage `blocked` names that runs
      // on from there (one chosen for itself, then quoted here, once).
      const opening = term === last + 1 ? passageAround(blocks, lastTerm + 1) : null;
      let to = opening?.last ?? -1;
      while (opening && to < end - 1 && blocked(term, to)) to += 1;
      if (opening && !blocked(term, to) && blocks[to]!.end - blocks[first]!.start <= 2 * PASSAGE_CHARS) last = to;
      break;
    }
    last = end - 1;
    term = end;
  }
  return last;
}

/**
 * `passage` as it is quoted: with the entries of the definition list its last block announces, as
 * long as `blocked` allows (see `withEntries`).
 */
export function withAnnounced(
  source: SourceText,
  blocks: readonly Block[],
  passage: Passage,
  blocked?: (from: number, to: number) => boolean,
): Passage {
  const last = withEntries(blocks, passage.first, passage.last, blocked);
  if (last === passage.last) return passage;
  return { ...passage, last, end: blocks[last]!.end, text: passageText(source, blocks, passage.first, last) };
}
