import { splitSentences } from '../../shared/sentences.ts';

/**
 * What ties a document's blocks together (see passages.ts): a block that leans on the one before it,
 * one that announces what follows, a caveat that qualifies what came before, a code block's
 * callouts. A passage is quoted with what these say it cannot be read without.
 */

/** A block as these tests read it: its kind (`paragraph`, `list`, `code`, `note`…) and its Markdown. */
export interface TiedBlock {
  kind: string;
  text: string;
}

/** The first sentence of a block's prose (Markdown markers off). */
function opening(text: string): string {
  const plain = text
    .replace(/^\s*(?:>\s*)+/gm, '')
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '')
    .replace(/[*_`]/g, '')
    .trim();
  return splitSentences(plain)[0] ?? plain;
}

/** A block that goes on from the one before it: quoted alone, it speaks of whatever came before. */
export function leansBack(block: TiedBlock): boolean {
  if (block.kind !== 'paragraph' && block.kind !== 'list') return false;
  return /^(?:this|that|these|those|it|its|it's|they|them|their|such|then|thus|hence|therefore|however|but|otherwise|instead|also|likewise|similarly|conversely|consequently|accordingly|nevertheless|nonetheless|moreover|furthermore|additionally|meanwhile|in this case|in that case|in addition|as a result|for this reason|for example|for instance|in other words|on the other hand|in contrast|doing so|here|so|and|or|alternatively|finally|next|afterwards|after that)\b/i.test(
    opening(block.text),
  );
}

/**
 * A block that announces what follows it ("…use the following commands:", "For example:"); a list
 * whose last item ends on a colon ("4. … similar to the change in the extended index header:").
 */
export function announces(block: TiedBlock): boolean {
  const text = block.text.trim().replace(/[*_`]/g, '');
  if (block.kind === 'list') return /:$/.test(text);
  if (block.kind !== 'paragraph' && block.kind !== 'note') return false;
  return (
    /:$/.test(text) ||
    /\b(?:as follows|the following|like this|like so|shown below|below|for example|for instance|e\.g\.|such as)[.:]?$/i.test(
      text,
    ) ||
    /\b(?:the following (?:example|command|commands|code|program|script|file)|here(?: is|['’]s) an? (?:example|program|sample))\b/i.test(
      text,
    )
  );
}

/** Words that open a caveat: what follows a quoted passage and changes what it means. */
const CAVEAT_OPENING =
  /^(?:however|but|unless|except|note that|note:|be careful|be aware|beware|caution|warning|important|do not|don't|never|otherwise|unfortunately|only|this (?:does not|doesn't|will not|won't|is not|isn't|fails|can fail|only)|that (?:does not|doesn't|is not|isn't)|it (?:does not|doesn't|will not|won't|is not|isn't|fails|only))\b/i;
/** Words that make a leaning block a caveat: it says what goes wrong with the passage before it. */
const CAVEAT_WORDS =
  /\b(?:not|no|never|fails?|failed|cannot|can't|won't|doesn't|don't|isn't|wrong|incorrect|unsafe|danger\w*|corrupt\w*|lose|lost|loss|bug|problem|careful|warning|deprecated|obsolete|avoid|instead|risk\w*)\b/i;

/** Words that warn of harm: a paragraph that says them qualifies what came just before it, however it opens. */
const WARNING_WORDS =
  /\b(?:corrupt\w*|data loss|los(?:e|es|ing|t) (?:data|power|work|changes|everything)|unsafe|danger\w*|security (?:hole|risk)|vulnerab\w*|irreversibl\w*|cannot be undone|permanently (?:deleted|lost|removed|destroyed)|destroy\w*|wip(?:e|es|ed|ing) out)\b/i;

/**
 * A block that qualifies the one before it: a note box, a caveat ("However…", "This program fails
 * because…"), or a paragraph that warns of harm (corruption, data loss, a security hole).
 */
export function isCaveat(block: TiedBlock): boolean {
  if (block.kind === 'note') return true;
  if (block.kind !== 'paragraph') return false;
  const first = opening(block.text);
  return CAVEAT_OPENING.test(first) || (leansBack(block) && CAVEAT_WORDS.test(first)) || WARNING_WORDS.test(block.text);
}

/** A code block whose lines carry callout numbers (`<1>`, `(1)`) explained by a numbered list after it. */
export function hasCallouts(block: TiedBlock): boolean {
  return block.kind === 'code' && /<\d+>|\(\d+\)\s*$/m.test(block.text);
}

/**
 * A paragraph that only dates what follows it ("Added in: v6.3.0", "Added in: v14.18.0, v12.22.0"),
 * as API references head their entries: it says nothing on its own, so it is never quoted alone.
 * (A stamp that closes an entry, as Python's "New in version 3.2.", says so in a sentence.)
 */
export function isStamp(block: TiedBlock): boolean {
  return (
    block.kind === 'paragraph' &&
    /^(?:Added in|Deprecated since|Removed in|Since):\s*v?\d+(?:\.\d+)*(?:,\s*v?\d+(?:\.\d+)*)*$/i.test(
      block.text.trim(),
    )
  );
}
