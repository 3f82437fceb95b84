/** Words that carry no topic, left out of queries and term matching. */
export const stopWords = new Set(
  'a an and are as at be but by for from has have how in into is it its of on or that the their this to was were what when where which who why will with do does did can could should would about than then them they there these those been being not no also such other more most some any each many much very just only into over under per via one two'.split(
    ' ',
  ),
);

/**
 * Words written as code (between backticks) in a text: never stop words there, since `with`, `is`
 * and `for` name statements and operators in the documentation of a language.
 */
function codeWords(lower: string): Set<string> {
  const words = new Set<string>();
  if (!lower.includes('`')) return words;
  for (const [, code] of lower.matchAll(/`([^`\n]+)`/g))
    for (const word of code!.match(/[\p{L}\p{N}_]+/gu) ?? []) words.add(word);
  return words;
}

/** A filter that drops stop words, except those the text writes as code, and single letters. */
function contentWord(lower: string): (word: string) => boolean {
  const code = codeWords(lower);
  return (word) => word.length > 1 && (!stopWords.has(word) || code.has(word));
}

/**
 * Lower-case words of a query, without stop words (but for code, see above) or duplicates; at most
 * 32. A word is letters, digits and underscores, as passages' words are counted: an identifier
 * (`work_mem`, `__dirname`) is one term, never its pieces.
 */
export function queryTerms(query: string): string[] {
  const lower = query.toLowerCase();
  const words = (lower.match(/[\p{L}\p{N}_]+/gu) ?? [])
    .map((word) => (/[\p{L}\p{N}]/u.test(word) ? word : ''))
    .filter(Boolean);
  return [...new Set(words.filter(contentWord(lower)))].slice(0, 32);
}

/** A light suffix stemmer, so "tuples" meets "tuple" and "sorting" meets "sort". */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/['’]s$/, '');
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  // "indentation" → "indent", "expression" → "express": the noun meets its verb.
  if (w.endsWith('ations') && w.length > 9) w = w.slice(0, -6);
  else if (w.endsWith('ation') && w.length > 8) w = w.slice(0, -5);
  else if (w.endsWith('ions') && w.length > 7) w = w.slice(0, -4);
  else if (w.endsWith('ion') && w.length > 6) w = w.slice(0, -3);
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('es') && /(ch|sh|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  // "sorting" → "sort", "running" → "run", "created" → "creat" (matches "create" below).
  if (/([^aeiouy])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** Stems of the content words of a text, in order (repeats kept); stop words written as code count. */
export function stems(text: string): string[] {
  const lower = text.toLowerCase();
  return (lower.match(/[\p{L}\p{N}_]+/gu) ?? []).filter(contentWord(lower)).map(stem);
}
