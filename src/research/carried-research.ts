import { coverage, profileQuestion, stems } from './relevance.ts';
import { emptyResearchState } from './research-state.ts';
import type { Note, ResearchState } from './research-types.ts';

/**
 * Research done elsewhere that a run carries on: a session imported from another tool's files. It
 * arrives as data in the run's input (never as forged journal records): the workflow's first step
 * turns it into the notes, visited pages and asked queries research continues from, and the run's
 * own steps take their usual keys from the next iteration on.
 */
export interface CarriedResearch {
  /** Where it comes from, as said to the user ("a legacy session file"). */
  from: string;
  /** The iterations done there, in order, numbered from 1. */
  iterations: CarriedIteration[];
  /** What the next iteration searches for (the last plan's queries). */
  nextQueries: string[];
  /** Summaries kept there without an address (they can inform, never be cited). */
  summaries: string[];
}

export interface CarriedIteration {
  number: number;
  startedAt: number | null;
  /** Null for an iteration that was under way when the other tool stopped. */
  endedAt: number | null;
  plan: string | null;
  queries: string[];
  contexts: { url: string; query: string; summary: string }[];
  nextPlan: string | null;
}

/** What research continues from: notes, queries asked, pages visited, and its state. */
export interface Seed {
  notes: Note[];
  asked: string[];
  visited: string[];
  state: ResearchState;
  /** Iterations completed: research continues at the next one. */
  iterations: number;
}

function hostTitle(url: string): string {
  try {
    return new URL(url).hostname || url;
  } catch {
    return url;
  }
}

/**
 * The research state of carried research: each context of a completed iteration is a note (the
 * other tool's summary of the page, scored as the extractive analyst scores a note's coverage of
 * the question), its page visited, its iteration's queries asked. Deterministic.
 */
export function seedFromCarried(question: string, carried: CarriedResearch): Seed {
  const profile = profileQuestion(question);
  const completed = carried.iterations.filter((iteration) => iteration.endedAt !== null);
  const notes: Note[] = [];
  const asked: string[] = [];
  const visited = new Set<string>();
  for (const iteration of completed) {
    asked.push(...iteration.queries.filter((query) => !asked.includes(query)));
    iteration.contexts.forEach((context, index) => {
      visited.add(context.url);
      notes.push({
        id: `r1/carried-${iteration.number}-${index}`,
        url: context.url,
        title: hostTitle(context.url),
        text: context.summary,
        query: context.query,
        iteration: iteration.number,
        score: Number(coverage(profile, new Set(stems(context.summary))).toFixed(4)),
      });
    });
  }
  const state = emptyResearchState();
  const sources = new Set(notes.map((note) => note.url)).size;
  state.findings = `Carried over from ${carried.from}: ${notes.length} notes from ${sources} sources after iteration ${completed.length}.${carried.summaries.length ? ` Summaries kept there: ${carried.summaries.join(' ')}` : ''}`;
  state.topics.done = [...asked];
  return { notes, asked, visited: [...visited], state, iterations: completed.length };
}
