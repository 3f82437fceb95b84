import { fileURLToPath } from 'node:url';
import { markerNumbers, replaceMarkers } from './citation-markers.ts';
import type { CitedSource, Note, Outline } from './research-types.ts';

/** Numbers sources in order of first appearance in the outline: one global map for every section. */
export function assignCitations(outline: Outline, notesById: Map<string, Note>): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const section of outline.sections) {
    for (const id of section.noteIds) {
      const note = notesById.get(id);
      if (note && !numbers.has(note.url)) numbers.set(note.url, numbers.size + 1);
    }
  }
  return numbers;
}

function numbersIn(list: string): number[] {
  return list.split(',').map((item) => Number(item.trim()));
}

/** The `[n]` numbers cited in a piece of text, in order (in its prose: never in code or a quote). */
export function citedNumbers(text: string): number[] {
  return markerNumbers(text);
}

/**
 * How a text's markers are renumbered: known numbers (keys of `urlByNumber`) in order of first
 * citation become 1, 2, 3…; unknown numbers have no entry and are removed by `applyCitationOrder`.
 */
export function citationOrder(text: string, urlByNumber: ReadonlyMap<number, string>): Map<number, number> {
  const order = new Map<number, number>();
  for (const number of citedNumbers(text))
    if (urlByNumber.has(number) && !order.has(number)) order.set(number, order.size + 1);
  return order;
}

/** A text with its markers renumbered by `order`; numbers missing from it are dropped, as are empty markers. */
export function applyCitationOrder(text: string, order: ReadonlyMap<number, number>): string {
  return replaceMarkers(text, (_match, space: string, list: string) => {
    const mapped = [...new Set(numbersIn(list).flatMap((number) => (order.has(number) ? [order.get(number)!] : [])))];
    return mapped.length ? `${space}[${mapped.join(', ')}]` : '';
  });
}

/**
 * Renumbers `[n]` markers so numbers follow order of first citation in the text, dropping sources
 * never cited; markers with unknown numbers are removed (the claim check records them first).
 */
export function renumberCitations(
  text: string,
  numbers: ReadonlyMap<string, number>,
  titles: ReadonlyMap<string, string>,
): { text: string; sources: CitedSource[]; order: Map<number, number> } {
  const urlByNumber = new Map([...numbers.entries()].map(([url, number]) => [number, url]));
  const order = citationOrder(text, urlByNumber);
  const sources = [...order.entries()].map(([old, number]) => {
    const url = urlByNumber.get(old)!;
    return { number, url, title: titles.get(url) ?? url };
  });
  return { text: applyCitationOrder(text, order), sources, order };
}

/** How a source is shown: file URLs as paths. */
export function displayLocation(url: string): string {
  return url.startsWith('file://') ? fileURLToPath(url) : url;
}

export function renderSources(sources: CitedSource[]): string {
  if (sources.length === 0) return '';
  return `## Sources\n\n${sources.map((source) => `${source.number}. ${source.title} — <${displayLocation(source.url)}>`).join('\n')}\n`;
}
