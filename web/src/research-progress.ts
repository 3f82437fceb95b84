import { isResearchPhase, parseStepKey, type ResearchPhase } from '../../src/research/step-keys.ts';
import { StreamedText } from '../../src/shared/streamed-text.ts';
import type { LiveEvent } from './use-session-events.ts';

/** The stages of a research as a reader follows them. */
export const stages = ['plan', 'research', 'outline', 'write', 'verify'] as const;
export type Stage = (typeof stages)[number];

export interface SourceRead {
  url: string;
  title: string;
  /** The host of a web page, or "local document". */
  where: string;
  query?: string;
  notes?: number;
}

export interface ResearchProgress {
  /** The stage the run is in, null before it starts. */
  stage: Stage | null;
  /** How far the run has come, 0 to 1 (by stage; research counts by iteration). */
  fraction: number;
  iteration: number;
  iterations: number;
  /** Queries asked, in order, with whether their search has finished. */
  queries: { query: string; done: boolean }[];
  sources: SourceRead[];
  notes: number;
  /** A step waiting to try again (a model or search provider down or busy), until it ends. */
  retrying: { key: string | null; message: string; delayMs: number } | null;
  /** The latest summary of what was found. */
  findings: string | null;
  /** The report as it is written, section by section, while the run writes it. */
  writing: string;
  /** True once the run has ended (completed, waiting, interrupted or failed). */
  ended: boolean;
  completed: boolean;
  waiting: boolean;
}

/** Where each phase of the workflow sits among the stages. */
const stageOfPhase: Record<ResearchPhase, Stage> = {
  plan: 'plan',
  search: 'research',
  read: 'research',
  analyze: 'research',
  outline: 'outline',
  write: 'write',
  verify: 'verify',
};

function where(url: string): string {
  if (url.startsWith('file:')) return 'local document';
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * Progress in research terms, from the session's events: the current run's stage as a step of the
 * whole, its findings so far and the report streaming in while it is written; and the queries
 * searched and the sources read (title and host, with the notes they gave) over every run, as the
 * session's totals count them (an outline review or a follow-up starts a new run; the searches
 * before it stay listed).
 */
export function researchProgress(events: readonly LiveEvent[], maxIterations = 3): ResearchProgress {
  const start = Math.max(
    0,
    events.findLastIndex((event) => event.type === 'run-start'),
  );
  const progress: ResearchProgress = {
    stage: null,
    fraction: 0,
    iteration: 0,
    iterations: maxIterations,
    queries: [],
    sources: [],
    notes: 0,
    retrying: null,
    findings: null,
    writing: '',
    ended: false,
    completed: false,
    waiting: false,
  };
  // Keyed by run and step key: a follow-up's run reuses the step keys of the run before it.
  const queries = new Map<string, { query: string; done: boolean }>();
  let run = 0;
  const streamed = new StreamedText();
  for (const [index, event] of events.entries()) {
    if (event.type === 'run-start') run++;
    const current = index >= start;
    // What every run did: the searches and the sources read.
    if (!current && !['step-start', 'step-end', 'source-found', 'notes-take'].includes(event.type)) continue;
    switch (event.type) {
      case 'phase-start':
        progress.stage = isResearchPhase(event.data.phase) ? stageOfPhase[event.data.phase] : progress.stage;
        break;
      case 'step-start': {
        const key = parseStepKey(event.data.key);
        if (current && key && 'iteration' in key) progress.iteration = Math.max(progress.iteration, key.iteration);
        const query = (event.data.input as { query?: unknown } | undefined)?.query;
        if (key?.kind === 'search' && typeof query === 'string' && !queries.has(`${run} ${event.data.key}`)) {
          const entry = { query, done: false };
          queries.set(`${run} ${event.data.key}`, entry);
          progress.queries.push(entry);
        }
        break;
      }
      case 'step-retry':
        progress.retrying = { key: event.data.key, message: event.data.error.message, delayMs: event.data.delayMs };
        break;
      case 'step-end': {
        const entry = queries.get(`${run} ${event.data.key}`);
        if (entry) entry.done = true;
        if (current && progress.retrying?.key === event.data.key) progress.retrying = null;
        break;
      }
      case 'source-found':
        progress.sources.push({
          url: event.data.url,
          title: event.data.title,
          where: where(event.data.url),
          query: event.data.query,
        });
        break;
      case 'notes-take': {
        progress.notes += event.data.count;
        const source = progress.sources.findLast((each) => each.url === event.data.url);
        if (source) source.notes = (source.notes ?? 0) + event.data.count;
        break;
      }
      case 'findings-update':
        progress.findings = event.data.summary;
        break;
      case 'report-delta':
        streamed.apply(event.data);
        break;
      case 'input-request':
        progress.waiting = true;
        break;
      case 'input-receive':
        progress.waiting = false;
        break;
      case 'run-end':
      case 'run-error':
        progress.ended = true;
        progress.waiting = event.type === 'run-end' && event.data.status === 'waiting';
        progress.completed = event.type === 'run-end' && event.data.status === 'completed';
        break;
      default:
        break;
    }
  }
  progress.iterations = Math.max(progress.iterations, progress.iteration);
  progress.writing = streamed.text;
  const index = progress.stage ? stages.indexOf(progress.stage) : -1;
  const withinResearch = progress.stage === 'research' ? progress.iteration / (progress.iterations + 1) : 0;
  progress.fraction = progress.completed ? 1 : Math.max(0, (index + withinResearch) / stages.length);
  return progress;
}
