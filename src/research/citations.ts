import { fileURLToPath } from 'node:url';
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

const markerPattern = /\[(\d+(?:\s*,\s*\d+)*)\]/g;

/**
 * Renumbers `[n]` markers so numbers follow order of first citation in the text, dropping sources
 * never cited; markers with unknown numbers are removed. Returns the new text and the sources.
 */
export function renumberCitations(text: string, numbers: Map<string, number>, titles: Map<string, string>): { text: string; sources: CitedSource[] } {
  const urlByNumber = new Map([...numbers.entries()].map(([url, number]) => [number, url]));
  const renumbered = new Map<number, number>();
  const sources: CitedSource[] = [];
  const result = text.replace(markerPattern, (_match, list: string) => {
    const mapped = list
      .split(',')
      .map((item) => Number(item.trim()))
      .filter((number) => urlByNumber.has(number))
      .map((number) => {
        if (!renumbered.has(number)) {
          renumbered.set(number, renumbered.size + 1);
          const url = urlByNumber.get(number)!;
          sources.push({ number: renumbered.size, url, title: titles.get(url) ?? url });
        }
        return renumbered.get(number)!;
      });
    return mapped.length ? `[${[...new Set(mapped)].join(', ')}]` : '';
  });
  return { text: result, sources };
}

/** The `[n]` numbers cited in a piece of text, in order. */
export function citedNumbers(text: string): number[] {
  return [...text.matchAll(markerPattern)].flatMap((match) => match[1]!.split(',').map((item) => Number(item.trim())));
}

/** How a source is shown: file URLs as paths. */
export function displayLocation(url: string): string {
  return url.startsWith('file://') ? fileURLToPath(url) : url;
}

export function renderSources(sources: CitedSource[]): string {
  if (sources.length === 0) return '';
  return `## Sources\n\n${sources.map((source) => `${source.number}. ${source.title} — <${displayLocation(source.url)}>`).join('\n')}\n`;
}
