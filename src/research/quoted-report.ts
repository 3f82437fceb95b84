/**
 * The grammar of a report made of quoted passages (the offline analyst's): each quote is a Markdown
 * blockquote holding the source's own text, word for word, followed by one attribution line that
 * says where it comes from and cites it (`— git-reset(1) › Undo a commit and redo [1]`). Citation
 * markers are never read inside a quote: `[3]` there is the source's own text. Pure: the web UI, the
 * benchmark and the tests read reports with it, the writer writes them with it.
 */

/** The attribution line of a quote: where it comes from, then its citation. */
export function attributionLine(where: string, number: number): string {
  return `— ${where.replace(/\s+/g, ' ').trim()} [${number}]`;
}

const ATTRIBUTION = /^— .*\[(\d+)\]\s*$/;

/** A source's Markdown as a blockquote: every line behind `> ` (a blank line behind `>`). */
export function asBlockquote(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) => (line.trim() ? `> ${line}` : '>'))
    .join('\n');
}

/** The Markdown inside a blockquote's lines (one level of `>` taken off each). */
function unquote(lines: readonly string[]): string {
  return lines.map((line) => line.replace(/^>\s?/, '')).join('\n');
}

/** One part of a report's body: a quote with its citation, or prose with the citations it carries. */
export type BodyPart =
  | { kind: 'quote'; text: string; citation: number | null }
  | { kind: 'prose'; text: string; citations: number[] };

/** The `[n]` numbers a piece of prose cites. */
function citationsIn(text: string): number[] {
  return [...text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)].flatMap((match) =>
    match[1]!.split(',').map((item) => Number(item.trim())),
  );
}

/**
 * Where a report's body ends: before its trailer (the italic line that says how it was made) or its
 * list of sources, whichever comes first.
 */
export function reportBody(report: string): string {
  const lines = report.split('\n');
  const end = lines.findIndex((line) => /^_(?:Made without|Written by)\b/.test(line) || /^## Sources\s*$/.test(line));
  return (end === -1 ? lines : lines.slice(0, end)).join('\n');
}

/**
 * The quotes and the prose of a report's body, in order: headings, labels (a line in italics),
 * blank lines and attribution lines are neither (an attribution line gives the quote before it its citation). Prose is split into
 * paragraphs; fenced code outside a quote is neither (it claims nothing in words).
 */
export function readBody(report: string): BodyPart[] {
  const parts: BodyPart[] = [];
  const lines = reportBody(report).split('\n');
  let quoteLines: string[] = [];
  let prose: string[] = [];
  const closeProse = () => {
    const text = prose.join('\n').trim();
    if (text) parts.push({ kind: 'prose', text, citations: citationsIn(text) });
    prose = [];
  };
  const closeQuote = (citation: number | null) => {
    if (quoteLines.length > 0) parts.push({ kind: 'quote', text: unquote(quoteLines).trim(), citation });
    quoteLines = [];
  };
  let fenced = false;
  for (const line of lines) {
    if (!fenced && line.trimStart().startsWith('```')) closeQuote(null);
    if (line.trimStart().startsWith('```') || fenced) {
      if (line.trimStart().startsWith('```')) fenced = !fenced;
      closeProse();
      continue;
    }
    if (line.startsWith('>')) {
      closeProse();
      quoteLines.push(line);
      continue;
    }
    const attribution = ATTRIBUTION.exec(line);
    if (attribution) {
      closeProse();
      closeQuote(Number(attribution[1]));
      continue;
    }
    if (!line.trim()) {
      // A blank line ends prose; a quote waits for its attribution line.
      closeProse();
      continue;
    }
    closeQuote(null);
    // Headings, and labels in italics ("_The sources searched hold nothing…_"), say nothing of the sources.
    if (/^#{1,6}\s/.test(line) || /^_[^_].*_$/.test(line.trim())) {
      closeProse();
      continue;
    }
    prose.push(line);
  }
  closeProse();
  closeQuote(null);
  return parts;
}

/** The sources a report lists: number → where (a URL, or a file's path). */
export function listedSources(report: string): Map<number, string> {
  const list = report.split(/^## Sources\s*$/m)[1] ?? '';
  return new Map(
    [...list.matchAll(/^(\d+)\.\s.*?<([^>]+)>\s*$/gm)].map((match) => [Number(match[1]), match[2]!] as const),
  );
}

/** White space folded to single spaces: text compared as a reader reads it. */
export function foldSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * What a report's body says that is not, word for word, in the document it cites: each quote that is
 * not a verbatim part of its cited document (or cites nothing), and each sentence of prose that is
 * not a verbatim part of a document it cites (citation markers and its closing mark aside). White
 * space is folded on both sides. `documentText` gives a cited number's document text (undefined when
 * it is not known: then nothing citing it can be verbatim).
 */
export function unquotedText(report: string, documentText: (number: number) => string | undefined): string[] {
  const folded = new Map<number, string | undefined>();
  const textOf = (number: number) => {
    if (!folded.has(number)) {
      const text = documentText(number);
      folded.set(number, text === undefined ? undefined : foldSpace(text));
    }
    return folded.get(number);
  };
  const found: string[] = [];
  for (const part of readBody(report)) {
    if (part.kind === 'quote') {
      const text = part.citation === null ? undefined : textOf(part.citation);
      if (!text?.includes(foldSpace(part.text))) found.push(part.text);
      continue;
    }
    for (const { segment } of segmenter.segment(part.text.replace(/\s*\n\s*/g, ' '))) {
      const cited = citationsIn(segment);
      const words = foldSpace(segment.replace(/\s*\[\d+(?:\s*,\s*\d+)*\]/g, '')).replace(/[.:;!?]+$/, '');
      if (!words) continue;
      if (!cited.some((number) => textOf(number)?.includes(words))) found.push(segment.trim());
    }
  }
  return found;
}
