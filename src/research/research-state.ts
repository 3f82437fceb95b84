import type { Analysis } from './analyst.ts';
import type { ResearchState } from './research-types.ts';

export function emptyResearchState(): ResearchState {
  return {
    aspects: { covered: [], open: [] },
    topics: { done: [], irrelevant: [] },
    preferences: [],
    findings: '',
    tokensPerSource: {},
    tokensEstimated: false,
  };
}

/** A stored state as this version reads it (older runs kept none, or fewer fields). */
export function readResearchState(value: unknown): ResearchState {
  const empty = emptyResearchState();
  if (!value || typeof value !== 'object') return empty;
  const stored = value as Partial<ResearchState>;
  const strings = (list: unknown) =>
    Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : [];
  return {
    aspects: { covered: strings(stored.aspects?.covered), open: strings(stored.aspects?.open) },
    topics: { done: strings(stored.topics?.done), irrelevant: strings(stored.topics?.irrelevant) },
    preferences: strings(stored.preferences),
    findings: typeof stored.findings === 'string' ? stored.findings : '',
    tokensPerSource:
      stored.tokensPerSource && typeof stored.tokensPerSource === 'object' ? { ...stored.tokensPerSource } : {},
    tokensEstimated: stored.tokensEstimated === true,
  };
}

function union(first: readonly string[], second: readonly string[]): string[] {
  const seen = new Set(first.map((item) => item.toLowerCase()));
  return [...first, ...second.filter((item) => !seen.has(item.toLowerCase()) && seen.add(item.toLowerCase()))];
}

/**
 * The state after an analysis: aspects it calls covered join the covered list (and leave the open
 * one); the open list is the analysis's own when it gave one.
 */
export function applyAnalysis(state: ResearchState, analysis: Analysis): void {
  const covered = union(state.aspects.covered, analysis.covered ?? []);
  const closed = new Set(covered.map((aspect) => aspect.toLowerCase()));
  const open = analysis.open ?? state.aspects.open;
  state.aspects = { covered, open: open.filter((aspect) => !closed.has(aspect.toLowerCase())) };
}

export function addTopics(state: ResearchState, done: readonly string[], irrelevant: readonly string[]): void {
  state.topics = {
    done: union(state.topics.done, done),
    irrelevant: union(state.topics.irrelevant, irrelevant),
  };
}

export function addPreference(state: ResearchState, preference: string): void {
  const clean = preference.trim().replace(/\s+/g, ' ').slice(0, 500);
  if (clean) state.preferences = union(state.preferences, [clean]);
}
