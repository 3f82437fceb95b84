/**
 * Sentences of prose, split where a reader ends them: at `.`, `!` or `?` followed by white space and
 * a capital, a digit, a quote or a bracket (or the end). Never inside a word or a number (`foo.c`,
 * `3.7`, `.PHONY`, `10.0.0.1` hold a dot, not an end), after an abbreviation (`e.g.`, `i.e.`,
 * `etc.`), after an initial (`J. Smith`), or inside a code span.
 */

/** Words that end in a period without ending a sentence. */
const ABBREVIATIONS = new Set(
  'e.g i.e etc vs cf al approx dr mr mrs ms st fig figs no nos vol inc ltd jr sr co corp dept est resp ca ch sec eq eqs viz resp'.split(
    ' ',
  ),
);

/** True when the mark at `at` ends a sentence that started at `from`. */
function endsSentence(text: string, at: number, from: number): boolean {
  const after = text.slice(at + 1);
  // The end of the text, or closing quotes and brackets, then white space and what opens a sentence.
  if (after.length > 0 && !/^[)"'”’\]]*(?:\s+[\p{Lu}\p{N}"'“‘(`[*_]|\s*$)/u.test(after)) return false;
  if (text[at] !== '.') return true;
  const word = /([\p{L}\p{N}._$%-]+)$/u.exec(text.slice(from, at))?.[1] ?? '';
  if (ABBREVIATIONS.has(word.toLowerCase().replace(/\.$/, ''))) return false;
  // An initial ("J. Smith").
  if (/^\p{Lu}$/u.test(word)) return false;
  // "27.2. Log-Shipping" or "3. Install": a number that opens the sentence is its label.
  if (/^\d+(?:\.\d+)*$/.test(word) && text.slice(from, at).trim() === word) return false;
  return true;
}

/** The sentences of a piece of prose, trimmed, with their offsets in it. */
export function sentenceSpans(text: string): { text: string; start: number; end: number }[] {
  const spans: { text: string; start: number; end: number }[] = [];
  let from = 0;
  let inCode = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (char === '`') inCode = !inCode;
    if (inCode || (char !== '.' && char !== '!' && char !== '?')) continue;
    if (!endsSentence(text, at, from)) continue;
    let end = at + 1;
    while (end < text.length && /[)"'”’\]]/.test(text[end]!)) end += 1;
    spans.push({ text: text.slice(from, end), start: from, end });
    from = end;
  }
  if (from < text.length) spans.push({ text: text.slice(from), start: from, end: text.length });
  return spans
    .map((span) => {
      const lead = span.text.length - span.text.trimStart().length;
      const trimmed = span.text.trim();
      return { text: trimmed, start: span.start + lead, end: span.start + lead + trimmed.length };
    })
    .filter((span) => span.text.length > 0);
}

/** The sentences of a piece of prose, trimmed. */
export function splitSentences(text: string): string[] {
  return sentenceSpans(text).map((span) => span.text);
}
