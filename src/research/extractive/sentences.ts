/** A sentence of a source's text, with its character offsets in that text. */
export interface Sentence {
  text: string;
  start: number;
  end: number;
  /** Index of the prose block (paragraph) it belongs to, and its place in it. */
  block: number;
  index: number;
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
function proseBlocks(text: string): { text: string; start: number }[] {
  const blocks: { text: string; start: number }[] = [];
  let offset = 0;
  let fenced = false;
  let open: { text: string; start: number; end: number } | null = null;
  const close = () => {
    if (open) blocks.push({ text: open.text, start: open.start });
    open = null;
  };
  for (const line of text.split('\n')) {
    const start = offset;
    offset += line.length + 1;
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      close();
      continue;
    }
    if (fenced || !isProseLine(line)) {
      close();
      continue;
    }
    const listItem = /^\s*([-*+]|\d+[.)])\s+/.exec(line);
    const current = open as { text: string; start: number; end: number } | null;
    // A list item starts its own block; other lines continue the paragraph they follow.
    if (current && !listItem && current.end === start - 1) {
      current.text += `\n${line}`;
      current.end = start + line.length;
    } else {
      close();
      const body = listItem ? line.slice(listItem[0].length) : line;
      const at = start + line.indexOf(body);
      open = { text: body, start: at, end: start + line.length };
    }
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
  // A lead-in to a list or code ("To create one, run:") is prose only when it says enough on its own.
  if (/:$/.test(sentence) && sentence.split(/\s+/).length < 10) return false;
  // A fragment (an option's or a table cell's description) starts in lower case; a sentence does not,
  // unless it opens with a name.
  const opening = /^[\p{L}_][\p{L}\p{N}_]*/u.exec(sentence)?.[0] ?? '';
  if (/^\p{Ll}/u.test(sentence) && !names.has(opening)) return false;
  const tokens = sentence.split(/\s+/).filter(Boolean);
  if (tokens.length < 6) return false;
  const wordLike = tokens.filter((token) => /^[("'“‘]?[\p{L}][\p{L}'’-]*[)"'”’,.;:!?]*$/u.test(token)).length;
  if (wordLike / tokens.length < 0.6) return false;
  if (!tokens.some((token) => functionWords.has(token.toLowerCase()))) return false;
  const code = [...sentence.matchAll(/`[^`]*`/g)].reduce((sum, match) => sum + match[0].length, 0);
  return code / sentence.length < 0.5;
}

/**
 * The prose sentences of a text, in order, with their offsets: headings, tables, code blocks and
 * fragments (code, table cells, lead-ins) are left out; every sentence is the source's own words.
 */
export function sentences(text: string): Sentence[] {
  const result: Sentence[] = [];
  const names = codeNames(text);
  proseBlocks(text).forEach((block, blockIndex) => {
    let index = 0;
    for (const piece of splitBlock(block.text)) {
      const flat = piece.text.replace(/\s*\n\s*/g, ' ');
      if (!isProse(flat, names)) continue;
      const start = block.start + piece.start;
      result.push({ text: flat, start, end: start + piece.text.length, block: blockIndex, index: index++ });
    }
  });
  return result;
}
