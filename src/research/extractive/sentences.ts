/**
 * A quotable unit of a source's text, with its character offsets in that text: one sentence, or a
 * sentence with what it cannot stand without (the sentence before it that it leans on, the code
 * block or list it introduces).
 */
export interface Sentence {
  text: string;
  start: number;
  end: number;
  /** Index of the prose block (paragraph) it belongs to, and its place in it. */
  block: number;
  index: number;
  /** The code block or list (Markdown) a lead-in introduces, quoted with it; `text` is the lead-in. */
  follows?: string;
  /** When the unit is two sentences (the second leans on the first: "This means…"): where the second starts in `text`. */
  joined?: number;
}

/**
 * How a sentence leans on what comes before it. `connective`: it goes on from the sentence before
 * ("This means…", "However, …", "For example, …"), so it is quoted only with it. `referring`: it
 * points back at something named before ("It returns…", "This module…", "These…"), which may be the
 * heading above it when it opens a section. Null: it stands on its own. Quoted alone, a leaning
 * sentence says something about whatever the writer put before it, which may be another thing.
 */
export function leansOnPrevious(sentence: string): 'connective' | 'referring' | null {
  const text = sentence.trim();
  if (
    /^(?:(?:this|that) (?:means|is why|is because|way)|then|thus|hence|therefore|however|otherwise|instead|also|likewise|similarly|conversely|consequently|accordingly|nevertheless|nonetheless|moreover|furthermore|additionally|meanwhile|in this case|in that case|in addition|as a result|for this reason|for example|for instance|in other words|on the other hand|in contrast|doing so|so)\b/i.test(
      text,
    )
  )
    return 'connective';
  if (/^(?:this|that|these|those|it|its|it's|they|them|their|such)\b/i.test(text)) return 'referring';
  return null;
}

/** A sentence that announces what follows it ("use a command similar to the following:"). */
export function introducesFollowing(sentence: string): boolean {
  const trimmed = sentence.trim();
  return (
    /:$/.test(trimmed) || /\b(?:as follows|the following|like this|like so|shown below|below)[.:]?$/i.test(trimmed)
  );
}

/** Longest code block or list quoted with the lead-in that introduces it, in characters. */
const FOLLOWING_CHARS = 1200;
/** Longest list item quoted with its list. */
const LIST_ITEM_CHARS = 200;

/**
 * The code block or list right after `end` in `text` (blank lines between allowed), as Markdown, or
 * null when something else follows, or it is too long to quote.
 */
function followingBlock(text: string, end: number): { block: string; end: number } | null {
  const rest = text.slice(end);
  const gap = /^[^\S\n]*\n(?:[^\S\n]*\n)*/.exec(rest)?.[0];
  if (gap === undefined) return null;
  const after = rest.slice(gap.length);
  const fence = /^```[^\n]*\n[\s\S]*?\n```/.exec(after);
  let block: string | null = fence ? fence[0] : null;
  if (!block) {
    // A list of short items, one line each (each is cited where it is written; an item of several
    // lines or sentences is a paragraph, not a list entry to quote).
    const lines: string[] = [];
    for (const line of after.split('\n')) {
      if (/^\s{2,}\S/.test(line)) return null;
      if (!/^\s*(?:[-*+]|\d+[.)])\s+\S/.test(line)) break;
      if (line.length > LIST_ITEM_CHARS || /[.!?]\s+\S/.test(line)) return null;
      lines.push(line);
    }
    block = lines.length > 0 ? lines.join('\n') : null;
  }
  if (!block || block.length > FOLLOWING_CHARS) return null;
  return { block, end: end + gap.length + block.length };
}

/** Words that end in a period without ending a sentence. */
const abbreviations = new Set(
  'e.g i.e etc vs cf al approx dr mr mrs ms st fig figs no nos vol inc ltd jr sr co corp dept est resp ca ch sec eq eqs'.split(
    ' ',
  ),
);

function readsAsWords(line: string): boolean {
  const tokens = line.split(/\s+/);
  return (
    tokens.length >= 4 && tokens.filter((token) => /^[\p{L}][\p{L}'’,.;-]*$/u.test(token)).length / tokens.length >= 0.7
  );
}

/** Lines that are not prose: headings, table rows, rules, indented code, shell and REPL prompts. */
function isProseLine(line: string): boolean {
  const trimmed = line.trim();
  if (!trimmed) return false;
  if (/^#{1,6}\s/.test(trimmed)) return false;
  if (trimmed.startsWith('|')) return false;
  if (/^([-*_]\s*){3,}$/.test(trimmed)) return false;
  // Indented lines are code unless they read as words (the later paragraphs of a list item).
  if (/^( {4}|\t)/.test(line) && !/^\s*([-*+]|\d+[.)])\s/.test(line) && !readsAsWords(trimmed)) return false;
  if (/^(>>>|\.\.\.|\$ |% |# )/.test(trimmed)) return false;
  return true;
}

/** Paragraphs of prose with their offsets: fenced code and the lines above are left out. */
function proseBlocks(text: string): { text: string; start: number; afterHeading: boolean }[] {
  const blocks: { text: string; start: number; afterHeading: boolean }[] = [];
  let offset = 0;
  let fenced = false;
  let open: { text: string; start: number; end: number; afterHeading: boolean } | null = null;
  // Whether the last line that was not blank is a heading: the next block opens its section.
  let headingAbove = true;
  const close = () => {
    if (open) blocks.push({ text: open.text, start: open.start, afterHeading: open.afterHeading });
    open = null;
  };
  for (const line of text.split('\n')) {
    const start = offset;
    offset += line.length + 1;
    const heading = !fenced && /^#{1,6}\s/.test(line.trim());
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      close();
      headingAbove = false;
      continue;
    }
    if (fenced || !isProseLine(line)) {
      close();
      if (line.trim()) headingAbove = heading;
      continue;
    }
    const listItem = /^\s*([-*+]|\d+[.)])\s+/.exec(line);
    const current = open as { text: string; start: number; end: number; afterHeading: boolean } | null;
    // A list item starts its own block; other lines continue the paragraph they follow.
    if (current && !listItem && current.end === start - 1) {
      current.text += `\n${line}`;
      current.end = start + line.length;
    } else {
      close();
      const body = listItem ? line.slice(listItem[0].length) : line;
      const at = start + line.indexOf(body);
      open = { text: body, start: at, end: start + line.length, afterHeading: headingAbove };
    }
    headingAbove = false;
  }
  close();
  return blocks;
}

/** True when the period at `at` ends a sentence (not an abbreviation, initial, or leading number). */
function endsSentence(text: string, at: number, sentenceStart: number): boolean {
  const after = text.slice(at + 1);
  // A sentence ends at the end of the block, or before white space and a capital, digit, quote or bracket.
  if (after.length > 0 && !/^[)"'”’\]]*\s+[A-Z0-9"'“‘(`[]/.test(after)) return false;
  if (text[at] !== '.') return true;
  const word = /([\p{L}\p{N}.]+)$/u.exec(text.slice(sentenceStart, at))?.[1] ?? '';
  if (abbreviations.has(word.toLowerCase())) return false;
  // A single capital letter is an initial ("J. Smith").
  if (/^\p{Lu}$/u.test(word)) return false;
  // "27.2. Log-Shipping" or "3. Install": a number that opens the sentence is its label.
  if (/^\d+(\.\d+)*$/.test(word) && text.slice(sentenceStart, at).trim() === word) return false;
  return true;
}

/**
 * Splits a block into sentences: at `.`, `!` or `?` followed by a space and a capital (or the end),
 * never inside a code span, after an abbreviation, after an initial, or after a leading number.
 */
function splitBlock(block: string): { text: string; start: number }[] {
  const result: { text: string; start: number }[] = [];
  let start = 0;
  let inCode = false;
  for (let at = 0; at < block.length; at++) {
    const char = block[at]!;
    if (char === '`') inCode = !inCode;
    if (inCode || (char !== '.' && char !== '!' && char !== '?')) continue;
    if (!endsSentence(block, at, start)) continue;
    let end = at + 1;
    while (end < block.length && /[)"'”’\]]/.test(block[end]!)) end++;
    result.push({ text: block.slice(start, end), start });
    start = end;
  }
  if (start < block.length) result.push({ text: block.slice(start), start });
  return result
    .map((piece) => {
      const lead = piece.text.length - piece.text.trimStart().length;
      return { text: piece.text.trim(), start: piece.start + lead };
    })
    .filter((piece) => piece.text.length > 0);
}

const functionWords = new Set(
  'the a an is are was were be been to of in on for with that this these those it its by as or and not you your can may will which when if from at has have than then there their'.split(
    ' ',
  ),
);

/** The names a text writes as code (`asyncio`, `os.path.join()` gives os, path and join). */
function codeNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const span of text.matchAll(/`([^`\n]+)`/g))
    for (const name of span[1]!.match(/[\p{L}_][\p{L}\p{N}_]*/gu) ?? []) names.add(name);
  return names;
}

/**
 * True for a sentence a reader can quote as prose: enough words, mostly words (not code or
 * numbers), some function words, no lead-in colon, and not mostly code spans. `names` are the
 * words its document writes as code: a sentence may open with one in lower case ("asyncio is a
 * library…").
 */
export function isProse(sentence: string, names: ReadonlySet<string> = new Set()): boolean {
  if (sentence.length > 500) return false;
  // A sentence ends as one (a heading, a link or a table of contents entry does not).
  if (!/[.!?:][)"'”’\]]*$/.test(sentence.trim())) return false;
  // A lead-in to a list or code ("To create one, run:") is prose only when it says enough on its own.
  if (/:$/.test(sentence) && sentence.split(/\s+/).length < 10) return false;
  // A fragment (an option's or a table cell's description) starts in lower case; a sentence does not,
  // unless it opens with a name.
  const opening = /^[\p{L}_][\p{L}\p{N}_]*/u.exec(sentence)?.[0] ?? '';
  // ("the", "a" or "it" in some code span of the page never makes "the file is deleted" a sentence.)
  if (/^\p{Ll}/u.test(sentence) && (!names.has(opening) || functionWords.has(opening))) return false;
  const tokens = sentence.split(/\s+/).filter(Boolean);
  if (tokens.length < 6) return false;
  const wordLike = tokens.filter((token) => /^[("'“‘]?[\p{L}][\p{L}'’-]*[)"'”’,.;:!?]*$/u.test(token)).length;
  if (wordLike / tokens.length < 0.6) return false;
  if (!tokens.some((token) => functionWords.has(token.toLowerCase()))) return false;
  const code = [...sentence.matchAll(/`[^`]*`/g)].reduce((sum, match) => sum + match[0].length, 0);
  return code / sentence.length < 0.5;
}

/**
 * The quotable units of a text, in order, with their offsets: prose sentences, each the source's own
 * words. Headings, tables, code blocks and fragments (code, table cells) are left out. A sentence
 * that leans on the one before it comes joined to it (never alone, and never when that one is not
 * prose); a sentence that introduces a code block or list comes with it, and is left out when
 * nothing it can bring follows.
 */
export function sentences(text: string): Sentence[] {
  const result: Sentence[] = [];
  const names = codeNames(text);
  // No sentence quoted yet since the last heading (or the page's start): the next one opens the section.
  let sectionOpen = true;
  proseBlocks(text).forEach((block, blockIndex) => {
    let index = 0;
    let previous: Sentence | null = null;
    if (block.afterHeading) sectionOpen = true;
    for (const piece of splitBlock(block.text)) {
      const flat = piece.text.replace(/\s*\n\s*/g, ' ');
      const start = block.start + piece.start;
      const end = start + piece.text.length;
      const lead = introducesFollowing(flat);
      // A lead-in is judged on its words; its colon says only that something follows.
      if (!isProse(lead ? flat.replace(/:$/, '.') : flat, names)) {
        previous = null;
        continue;
      }
      let unit: Sentence = { text: flat, start, end, block: blockIndex, index: index++ };
      // The first sentence under a heading may point back at what the heading names ("This module
      // provides…" under "tempfile — Generate temporary files"): it stands; one that goes on from
      // a sentence ("This means…") never does.
      const leaning = leansOnPrevious(flat);
      const opensSection = sectionOpen;
      if (leaning === 'connective' || (leaning === 'referring' && !opensSection)) {
        if (!previous || previous.joined !== undefined || previous.follows) {
          previous = null;
          continue;
        }
        unit = { ...unit, text: `${previous.text} ${flat}`, start: previous.start, joined: previous.text.length + 1 };
      }
      if (lead) {
        const following = followingBlock(text, end);
        if (!following) {
          previous = null;
          continue;
        }
        unit = { ...unit, follows: following.block, end: following.end };
      }
      result.push(unit);
      previous = unit;
      sectionOpen = false;
    }
  });
  return result;
}
