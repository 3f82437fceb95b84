import { queryTerms, termList } from '../shared/terms.ts';
import type { Analyst, AnalystCall } from './analyst.ts';
import type { ResearchSettings } from './research-settings.ts';
import { reportWords } from './research-settings.ts';
import type { Note, Outline, OutlineSection } from './research-types.ts';

/** A local computation as an analyst call (no model, nothing to journal as a prompt). */
function local<T>(compute: () => T): AnalystCall<T> {
  return { model: null, run: async () => ({ output: compute() }) };
}

interface Sentence {
  text: string;
  start: number;
  end: number;
}

/** Prose lines of Markdown-ish text with their offsets: no headings, tables, code blocks or rules. */
function proseLines(text: string): { line: string; start: number }[] {
  const lines: { line: string; start: number }[] = [];
  let offset = 0;
  let fenced = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('```')) fenced = !fenced;
    else if (!fenced && trimmed && !/^(#|\||<|---|\*\*\*|    )/.test(line) && !/^\s*[-*]\s*$/.test(line)) lines.push({ line, start: offset });
    offset += line.length + 1;
  }
  return lines;
}

/** Sentences of the prose with their offsets; list markers are not part of a sentence. */
export function sentences(text: string): Sentence[] {
  const result: Sentence[] = [];
  // Consecutive prose lines form paragraphs, so sentences may wrap across lines.
  const paragraphs: { text: string; start: number }[] = [];
  for (const { line, start } of proseLines(text)) {
    const last = paragraphs.at(-1);
    if (last && last.start + last.text.length + 1 === start && !/^\s*([-*]|\d+\.)\s/.test(line)) last.text += `\n${line}`;
    else paragraphs.push({ text: line, start });
  }
  for (const paragraph of paragraphs) {
    // A sentence ends at . ! or ? followed by a space or the end (so `Runner.execute` stays whole).
    for (const match of paragraph.text.matchAll(/(?:[^.!?]|[.!?](?!\s|$))+(?:[.!?]+(?=\s|$)|$)/g)) {
      const raw = match[0];
      const trimmed = raw.trim().replace(/^([-*>]|\d+[.)])\s+/, '');
      if (trimmed.split(/\s+/).length < 5) continue;
      const start = paragraph.start + match.index! + raw.indexOf(trimmed);
      result.push({ text: trimmed.replace(/\s*\n\s*/g, ' '), start, end: start + trimmed.length });
    }
  }
  return result;
}

/** BM25 scores of each text against the terms, with document statistics from `texts` themselves. */
export function bm25(texts: string[], terms: string[], k1 = 1.2, b = 0.75): number[] {
  const lists = texts.map(termList);
  const average = lists.reduce((sum, list) => sum + list.length, 0) / Math.max(1, lists.length);
  const documentFrequency = new Map(terms.map((term) => [term, lists.filter((list) => list.includes(term)).length]));
  return lists.map((list) => {
    let score = 0;
    for (const term of terms) {
      const frequency = list.filter((word) => word === term).length;
      if (frequency === 0) continue;
      const df = documentFrequency.get(term) ?? 0;
      const idf = Math.log(1 + (texts.length - df + 0.5) / (df + 0.5));
      score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * list.length) / Math.max(1, average)));
    }
    return score;
  });
}

/** The words that occur most across texts, excluding `known`, most frequent first (ties alphabetical). */
function salientTerms(texts: string[], known: Set<string>, count: number): string[] {
  const frequency = new Map<string, number>();
  for (const text of texts) for (const term of new Set(termList(text))) if (!known.has(term) && !/^\d+$/.test(term)) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  return [...frequency.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, count).map(([term]) => term);
}

function shortTitle(question: string): string {
  const clean = question.trim().replace(/\s+/g, ' ').replace(/[?.!]+$/, '');
  if (clean.length <= 80) return clean;
  return `${clean.slice(0, 80).replace(/\s+\S*$/, '')}…`;
}

/**
 * Research without a language model: keyword query expansion, BM25 sentence ranking for notes,
 * novelty-based stopping, outlines by shared terms, and sections made of extracted sentences with
 * their citations. Deterministic: the same question over the same corpus gives the same report.
 */
export class ExtractiveAnalyst implements Analyst {
  readonly name = 'extractive';
  readonly usesModel = false;

  title(question: string, _settings: ResearchSettings) {
    return local(() => shortTitle(question));
  }

  plan({ question, settings }: { question: string; settings: ResearchSettings }) {
    return local(() => {
      const terms = queryTerms(question);
      const queries = [question.trim()];
      // Pairs of the question's keywords widen the net around the main query.
      for (let index = 0; index + 1 < terms.length && queries.length < settings.queriesPerIteration; index++) queries.push(`${terms[index]} ${terms[index + 1]}`);
      if (queries.length < settings.queriesPerIteration && terms.length > 0) queries.push(terms.join(' '));
      return { queries: [...new Set(queries)].slice(0, settings.queriesPerIteration) };
    });
  }

  takeNotes({ question, source, iteration, idPrefix }: Parameters<Analyst['takeNotes']>[0]) {
    return local((): Note[] => {
      const candidates = sentences(source.text);
      if (candidates.length === 0) return [];
      const terms = queryTerms(`${question} ${source.query}`);
      const scores = bm25(candidates.map((sentence) => sentence.text), terms);
      return candidates
        .map((sentence, index) => ({ sentence, score: scores[index]!, index }))
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score || a.index - b.index)
        .slice(0, 3)
        .sort((a, b) => a.index - b.index)
        .map(({ sentence }, index) => ({
          id: `${idPrefix}-${index}`,
          url: source.url,
          title: source.title,
          text: sentence.text,
          start: source.offset + sentence.start,
          end: source.offset + sentence.end,
          query: source.query,
          iteration,
        }));
    });
  }

  analyze({ question, notes, newNotes, iteration, asked, settings }: Parameters<Analyst['analyze']>[0]) {
    return local(() => {
      const before = new Set(notes.filter((note) => !newNotes.includes(note)).flatMap((note) => termList(note.text)));
      const fresh = new Set(newNotes.flatMap((note) => termList(note.text)).filter((term) => !before.has(term)));
      if (iteration >= settings.maxIterations) return { done: true, reason: 'iteration limit reached', nextQueries: [] };
      if (newNotes.length === 0 || fresh.size < 5) return { done: true, reason: `little new material (${fresh.size} new terms)`, nextQueries: [] };
      const known = new Set(queryTerms(question));
      const askedSet = new Set(asked.map((query) => query.toLowerCase()));
      const gaps = salientTerms(newNotes.map((note) => note.text), known, settings.queriesPerIteration * 2);
      const nextQueries = gaps.map((term) => `${[...known].slice(0, 2).join(' ')} ${term}`.trim()).filter((query) => !askedSet.has(query.toLowerCase()));
      if (nextQueries.length === 0) return { done: true, reason: 'no unexplored terms left', nextQueries: [] };
      return { done: false, reason: `${fresh.size} new terms; following up on ${gaps.slice(0, 3).join(', ')}`, nextQueries: nextQueries.slice(0, settings.queriesPerIteration) };
    });
  }

  outline({ question, notes, settings, feedback, previous }: Parameters<Analyst['outline']>[0]) {
    return local((): Outline => {
      const maxSections = settings.reportLength === 'short' ? 2 : settings.reportLength === 'medium' ? 3 : 5;
      // Feedback words the person asked for lead the outline (the extractive analyst's revision).
      const wanted = feedback ? queryTerms(feedback).filter((term) => notes.some((note) => termList(note.text).includes(term))) : [];
      const sections: OutlineSection[] = [];
      const used = new Set<string>();
      // Sections the person asked for come first and may use any note.
      for (const theme of wanted) {
        const members = notes.filter((note) => termList(note.text).includes(theme)).slice(0, 4);
        members.forEach((note) => used.add(note.id));
        sections.push({ title: theme.charAt(0).toUpperCase() + theme.slice(1), focus: `Findings about "${theme}", as requested.`, noteIds: members.map((note) => note.id) });
      }
      const overview = notes.filter((note) => !used.has(note.id)).slice(0, 3);
      if (overview.length > 0) {
        sections.splice(wanted.length ? 0 : sections.length, 0, { title: 'Overview', focus: `What the sources say about: ${question.trim()}`, noteIds: overview.map((note) => note.id) });
        overview.forEach((note) => used.add(note.id));
      }
      // Then one section per source, in order of first relevance, titled by the source.
      const bySource = new Map<string, Note[]>();
      for (const note of notes) if (!used.has(note.id)) bySource.set(note.url, [...(bySource.get(note.url) ?? []), note]);
      for (const members of bySource.values()) {
        if (sections.length >= maxSections + 1 + wanted.length) break;
        members.slice(0, 4).forEach((note) => used.add(note.id));
        sections.push({ title: members[0]!.title, focus: `What "${members[0]!.title}" adds.`, noteIds: members.slice(0, 4).map((note) => note.id) });
      }
      const rest = notes.filter((note) => !used.has(note.id));
      if (rest.length > 0) sections.push({ title: 'Other findings', focus: 'Further relevant passages.', noteIds: rest.slice(0, 4).map((note) => note.id) });
      return { title: previous?.title ?? shortTitle(question), sections };
    });
  }

  writeSection({ section, notes, citationFor, settings, onDelta }: Parameters<Analyst['writeSection']>[0]) {
    return local(() => {
      const budget = Math.ceil(reportWords[settings.reportLength] / 3);
      const lines: string[] = [];
      let words = 0;
      for (const note of notes) {
        if (words > budget) break;
        const sentence = /[.!?]$/.test(note.text) ? note.text.slice(0, -1) : note.text;
        lines.push(`${sentence} [${citationFor[note.url]}].`);
        words += note.text.split(/\s+/).length;
      }
      const text = lines.join(' ');
      onDelta?.(text);
      return text;
    });
  }

  assessFollowUp({ question, notes }: Parameters<Analyst['assessFollowUp']>[0]) {
    return local(() => {
      const terms = queryTerms(question);
      const covered = new Set(notes.flatMap((note) => termList(note.text)));
      const share = terms.length === 0 ? 1 : terms.filter((term) => covered.has(term)).length / terms.length;
      return share >= 0.6
        ? { action: 'answer' as const, reason: `the stored notes cover ${Math.round(share * 100)}% of the question's terms` }
        : { action: 'research' as const, reason: `the stored notes cover only ${Math.round(share * 100)}% of the question's terms` };
    });
  }

  answer({ question, notes, citationFor }: Parameters<Analyst['answer']>[0]) {
    return local(() => {
      const scores = bm25(notes.map((note) => note.text), queryTerms(question));
      const best = notes.map((note, index) => ({ note, score: scores[index]! })).filter((entry) => entry.score > 0).sort((a, b) => b.score - a.score).slice(0, 4);
      if (best.length === 0) return 'The sources gathered so far do not address this question.';
      return best.map(({ note }) => `${note.text.replace(/[.!?]$/, '')} [${citationFor[note.url]}].`).join(' ');
    });
  }
}
