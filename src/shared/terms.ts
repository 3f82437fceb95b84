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
  // Symbols first: they are what a question about `$@` or `-F` is about.
  return [...new Set([...symbolTerms(query), ...words.filter(contentWord(lower))])].slice(0, 32);
}

/**
 * What counts as a symbol: a token (between white space, without the quotes, brackets or closing
 * punctuation around it) that words alone would lose — a make or shell variable (`$@`, `$<`, `$(CC)`,
 * `%.o`), a special target (`.PHONY`), an option (`-F`, `--force`), an IPv4 address (`10.0.0.1`), a
 * file name with its extension (`foo.c`), an operator (`==`, `&&`, `<<`).
 */
const SYMBOL_FORMS = [
  /^[$%@][^\s]{0,15}$/,
  /^\.[A-Z][A-Z_]{1,20}$/,
  /^--?[A-Za-z0-9][\w-]{0,30}$/,
  /^\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?$/,
  /^[\w-]{1,40}\.(?:c|h|o|a|so|py|js|ts|sh|mk|m4|ac|am|in|cfg|conf|txt|md|html?|json|ya?ml|toml|ini|log|deb)$/,
  /^(?:==|!=|<=|>=|&&|\|\||<<|>>|\*\*|\+=|-=|:=|=~)$/,
];

/** Marks around a token that are not part of it: quotes, brackets, a sentence's closing punctuation. */
function bareToken(token: string): string {
  return (
    token
      .replace(/^[`'"‘’“”([{<]+/u, '')
      // A sentence's punctuation after a closing quote ("`$*`," or "‘-n’.") goes with the quote.
      .replace(/(?<=[`'"‘’“”)\]}>])[.,;:!?]+$/u, '')
      .replace(/[`'"‘’“”)\]}>]+$/u, '')
      // A sentence's punctuation after a symbol of two marks or more ("$@." but "$?" whole).
      .replace(/(?<=[\p{L}\p{N}_)\]]|\S{2})[.,;:!?]+$/u, '')
      .replace(/^[.,;:!?]+$/u, '')
  );
}

/** A symbol as one searchable word: `qs` and its UTF-8 bytes as three digits each (`$@` → `qs036064`). */
function encodeSymbol(symbol: string): string {
  return `qs${[...new TextEncoder().encode(symbol)].map((byte) => String(byte).padStart(3, '0')).join('')}`;
}

/**
 * The symbols of a text (see `SYMBOL_FORMS`), each as one searchable word of letters and digits that
 * every full-text index keeps whole and no stemmer changes (`$@` → `qs036064`). Indexing adds them to
 * a passage's searchable text, and a query's terms include them, so `$@` finds what words cannot.
 */
export function symbolTerms(text: string): string[] {
  return symbolsOf(text).map((symbol) => symbol.term);
}

/** The symbols of a text as written (`$@`) with their searchable words (`qs036064`), in order. */
export function symbolsOf(text: string): { symbol: string; term: string }[] {
  const found: { symbol: string; term: string }[] = [];
  // Tokens with a mark inside them or before them: most words of prose have none, or only a closing one.
  for (const match of text.matchAll(CANDIDATE)) {
    const bare = bareToken(match[0]);
    if (bare.length < 2 || bare.length > 40 || !SYMBOL_MARK.test(bare)) continue;
    if (SYMBOL_FORMS.some((form) => form.test(bare))) found.push({ symbol: bare, term: encodeSymbol(bare) });
    else for (const option of optionNames(bare)) found.push({ symbol: option, term: encodeSymbol(option) });
  }
  return found;
}

/** A mark a symbol holds (a word with none is a word). */
const SYMBOL_MARK = /[$%@.=!<>&|*+:~-]/;
/** A token that starts with a mark, or holds one before its last character. */
const CANDIDATE = /(?<!\S)(?:[^\s]*[$%@.=!<>&|*+:~-][^\s]+|[$%@=!<>&|*+:~-][^\s]*)/g;

/**
 * The option an option heading or usage names with its value or its negation
 * (`--format=<format>`, `--inspect[=[host:]port]`, `--[no-]verify` → `--format`, `--inspect`,
 * `--verify` and `--no-verify`): what a user types when asking about it.
 */
function optionNames(token: string): string[] {
  const option = /^(--?)(\[no-\])?([A-Za-z0-9][\w-]{0,30})(?:[=[][^\s]*)?$/.exec(token);
  if (!option || token === `${option[1]}${option[3]}`) return [];
  const [, dashes, negation, name] = option;
  return negation ? [`${dashes}${name}`, `${dashes}no-${name}`] : [`${dashes}${name}`];
}

/** True for a term made by `symbolTerms`. */
export function isSymbolTerm(term: string): boolean {
  return /^qs(?:\d{3})+$/.test(term);
}

/**
 * True for a term that names code: a symbol (`-n`, `$@`, `symbolTerms`) or an identifier written
 * with underscores (`work_mem`, `ROOT_URLCONF`, `on_commit`), which a question names as the manual
 * heads its entry.
 */
export function namesCode(term: string): boolean {
  return isSymbolTerm(term) || /^[a-z0-9]+(?:_[a-z0-9]+)+$/.test(term);
}

/** A light suffix stemmer, so "tuples" meets "tuple" and "sorting" meets "sort". */
export function stem(word: string): string {
  if (isSymbolTerm(word)) return word;
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
  const words = (lower.match(/[\p{L}\p{N}_]+/gu) ?? []).filter(contentWord(lower)).map(stem);
  const symbols = symbolTerms(text);
  return symbols.length > 0 ? [...words, ...symbols] : words;
}

/**
 * Pairs of neighbouring content words of a text that another text may write as one word ("time
 * zone": "timezone"; "file system": "filesystem"; "host name": "hostname"), as written.
 */
export function compoundPairs(text: string): [string, string][] {
  const words = text.toLowerCase().match(/[\p{L}]+|[^\p{L}\s]+/gu) ?? [];
  const pairs: [string, string][] = [];
  for (let index = 0; index + 1 < words.length; index++) {
    const [first, second] = [words[index]!, words[index + 1]!];
    if (!/^\p{L}{2,}$/u.test(first) || !/^\p{L}{2,}$/u.test(second)) continue;
    if (stopWords.has(first) || stopWords.has(second)) continue;
    pairs.push([first, second]);
  }
  return pairs;
}

/**
 * Words that users and manuals use for the same action or thing, where the user's word is often not
 * the manual's ("delete the untracked files": "Remove untracked files"; "folder": "directory"). A
 * short list of plain equivalents, never topic words: a search for one finds the others, and a
 * passage that holds another covers the question's word. Not "undo" and "revert": in Git a revert is
 * a new commit, not an undo, and a question about undoing a commit was answered with `git revert`.
 */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['delete', 'remove', 'erase'],
  ['folder', 'directory'],
  ['display', 'show'],
  ['modify', 'change', 'alter'],
  ['replace', 'substitute'],
];

/** The stems of a word's usual inflections: "modify" → modify, modifi (modified), … */
function inflectedStems(word: string): string[] {
  const base = word.replace(/e$/, '');
  const forms = [word, `${word}s`, `${base}ed`, `${base}ing`, word.replace(/y$/, 'ied'), word.replace(/y$/, 'ies')];
  return [...new Set(forms.map(stem))];
}

const synonymGroups = SYNONYM_GROUPS.map((words) =>
  words.map((word) => ({ word, stems: new Set(inflectedStems(word)) })),
);

/**
 * The other words of a word's synonym group, as written ("delete" → remove, erase), found by stem
 * (any inflection of a word of the group); none for a word in no group.
 */
export function synonymsOf(word: string): string[] {
  const key = stem(word);
  const group = synonymGroups.find((each) => each.some((entry) => entry.stems.has(key)));
  return group ? group.filter((entry) => !entry.stems.has(key)).map((entry) => entry.word) : [];
}

/** Every stem that stands for a word of the same group as `term` (a stem), `term`'s own group aside. */
export function synonymStems(term: string): string[] {
  const group = synonymGroups.find((each) => each.some((entry) => entry.stems.has(term)));
  return group ? group.filter((entry) => !entry.stems.has(term)).flatMap((entry) => [...entry.stems]) : [];
}
