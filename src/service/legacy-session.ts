import { z } from 'zod';
import type { SearchResult } from '../providers/search/search-provider.ts';
import { coverage, profileQuestion, stems } from '../research/relevance.ts';
import { chooseSources, freshQueries } from '../research/research-loop.ts';
import { parseResearchSettings, type ResearchSettings } from '../research/research-settings.ts';
import type { Note, ResearchOutput, SourceText } from '../research/research-types.ts';
import { defaultTitle, RESEARCH_WORKFLOW_NAME, RESEARCH_WORKFLOW_VERSION } from '../research/research-workflow.ts';
import { invalidInput } from '../store/errors.ts';
import type { SessionSnapshot, SessionStatus, StepDetail } from '../store/store.ts';

/**
 * The per-session JSON layout of earlier research tools that save sessions as files. Quarry imports
 * it (an unfinished one resumes at iteration `last_completed_iteration + 1`) and writes it
 * (`export --format legacy-json`).
 */
const time = z.union([z.string(), z.number()]).nullable().optional();
const context = z.object({ url: z.string().min(1), query: z.string(), content_summary: z.string() });

export const legacySessionSchema = z.object({
  session_id: z.string().min(1).max(128),
  start_time: time,
  end_time: time,
  status: z.enum(['running', 'completed', 'interrupted', 'error']),
  user_query: z.string().trim().min(1).max(100_000),
  system_instruction: z.string().nullable().optional(),
  settings: z
    .object({
      max_iterations: z.number().int().min(1).optional(),
      max_search_items: z.number().int().min(1).optional(),
      default_model: z.string().nullable().optional(),
      reason_model: z.string().nullable().optional(),
      use_ollama: z.boolean().optional(),
      use_jina: z.boolean().optional(),
      with_planning: z.boolean().optional(),
    })
    .default({}),
  iterations: z
    .array(
      z.object({
        iteration_number: z.number().int().min(1),
        start_time: time,
        end_time: time,
        plan_generated: z.string().nullable().optional(),
        search_queries: z.array(z.string()).default([]),
        contexts_gathered: z.array(context).default([]),
        next_plan: z.string().nullable().optional(),
      }),
    )
    .default([]),
  aggregated_data: z
    .object({
      all_search_queries: z.array(z.string()).optional(),
      aggregated_contexts: z.array(context).optional(),
      last_plan: z.string().nullable().optional(),
      last_completed_iteration: z.number().int().min(0).optional(),
    })
    .default({}),
  final_report: z.string().nullable().optional(),
  error_message: z.string().nullable().optional(),
});

export type LegacySession = z.infer<typeof legacySessionSchema>;

function toMs(value: string | number | null | undefined, fallback: number): number {
  if (value === null || value === undefined) return fallback;
  if (typeof value === 'number') return value < 1e12 ? Math.round(value * 1000) : value;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? fallback : parsed;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Search queries from a plan written as prose or a list: one per line, bullets and numbers removed. */
function queriesFromPlan(plan: string | null | undefined, settings: ResearchSettings, fallback: string): string[] {
  const lines = (plan ?? '')
    .split(/\n|;/)
    .map((line) => line.replace(/^\s*([-*•]|\d+[.)])\s*/, '').trim())
    .filter((line) => line.length > 3 && line.length <= 200);
  return (lines.length > 0 ? lines : [fallback]).slice(0, settings.queriesPerIteration);
}

function hostTitle(url: string): string {
  try {
    return new URL(url).hostname || url;
  } catch {
    return url;
  }
}

class JournalBuilder {
  readonly steps: StepDetail[] = [];
  constructor(
    private readonly runId: string,
    private clock: number,
  ) {}

  add(key: string, phase: string, output: unknown, input?: unknown): void {
    this.clock += 1;
    this.steps.push({
      runId: this.runId,
      key,
      seq: this.steps.length + 1,
      phase,
      kind: 'task',
      status: 'completed',
      attempts: 1,
      input,
      output,
      error: null,
      usage: null,
      prompt: null,
      startedAt: this.clock,
      endedAt: this.clock,
    });
  }
}

/**
 * A Quarry session whose journal holds the legacy session's completed iterations under the keys the
 * research workflow uses, so resuming replays them and continues at the next iteration with the
 * same queries, contexts (as sources and notes) and plan.
 */
export function legacyToSnapshot(legacy: LegacySession): SessionSnapshot {
  const createdAt = toMs(legacy.start_time, Date.now());
  const iterations = [...legacy.iterations].sort((a, b) => a.iteration_number - b.iteration_number);
  iterations.forEach((iteration, index) => {
    if (iteration.iteration_number !== index + 1)
      throw invalidInput(`iterations.${index}.iteration_number`, 'iterations must be numbered 1, 2, 3… without gaps');
  });
  const lastCompleted = clamp(
    legacy.aggregated_data.last_completed_iteration ?? iterations.filter((iteration) => iteration.end_time).length,
    0,
    iterations.length,
  );
  const settings = parseResearchSettings({
    maxIterations: clamp(Math.max(legacy.settings.max_iterations ?? 3, lastCompleted), 1, 10),
    queriesPerIteration: clamp(Math.max(3, ...iterations.map((iteration) => iteration.search_queries.length)), 1, 8),
    sourcesPerQuery: clamp(legacy.settings.max_search_items ?? 3, 1, 10),
    ...(legacy.system_instruction ? { systemInstruction: legacy.system_instruction } : {}),
    search: legacy.settings.use_jina ? ['jina'] : [],
    docs: [],
  });
  const question = legacy.user_query.trim();
  const runId = `${legacy.session_id}-run-1`;
  const journal = new JournalBuilder(runId, createdAt);
  journal.add('title', 'plan', { value: defaultTitle(question), usage: null });
  journal.add('title/apply', 'plan', undefined);
  const firstQueries = iterations[0]?.search_queries.length
    ? iterations[0].search_queries
    : queriesFromPlan(legacy.aggregated_data.last_plan, settings, question);
  journal.add('plan', 'plan', {
    value: { queries: firstQueries, plan: iterations[0]?.plan_generated ?? null },
    usage: null,
  });
  const profile = profileQuestion(question);
  const asked: string[] = [];
  let visited: string[] = [];
  const notes: Note[] = [];
  let queries = firstQueries;
  for (const iteration of iterations.slice(0, lastCompleted)) {
    const number = iteration.iteration_number;
    const base = `iteration-${number}`;
    const fresh = freshQueries(queries, asked, settings);
    asked.push(...fresh);
    const toResult = (item: z.infer<typeof context>): SearchResult => ({
      url: item.url,
      title: hostTitle(item.url),
      snippet: item.content_summary,
      content: item.content_summary,
      provider: 'legacy',
    });
    const searches = fresh.map((query, index) => ({
      // Contexts whose query is not among this iteration's go with its first query, so none is lost.
      results: iteration.contexts_gathered
        .filter((item) => item.query === query || (index === 0 && !fresh.includes(item.query)))
        .map(toResult),
      errors: [] as string[],
    }));
    for (const [index, search] of searches.entries()) {
      journal.add(`${base}/search-${index}`, 'search', search, { query: fresh[index] });
    }
    const chosen = chooseSources(searches, fresh, visited, settings);
    visited = chosen.visited;
    chosen.chosen.forEach(({ result, query }, index) => {
      const source: SourceText = {
        url: result.url,
        title: result.title,
        text: result.content ?? result.snippet,
        offset: 0,
        query,
        provider: 'legacy',
        fetched: true,
      };
      journal.add(`${base}/read-${index}`, 'read', source, { url: result.url });
    });
    chosen.chosen.forEach(({ result, query }, index) => {
      const note: Note = {
        id: `r1/${base}-${index}-0`,
        url: result.url,
        title: result.title,
        text: result.snippet,
        query,
        iteration: number,
        // How well the earlier tool's summary covers the question, as the extractive analyst scores notes.
        score: Number(coverage(profile, new Set(stems(result.snippet))).toFixed(4)),
      };
      notes.push(note);
      journal.add(`${base}/notes-${index}`, 'read', { value: [note], usage: null });
    });
    const next = iterations[number]?.search_queries.length
      ? iterations[number]!.search_queries
      : queriesFromPlan(iteration.next_plan ?? legacy.aggregated_data.last_plan, settings, question);
    const sources = new Set(notes.map((note) => note.url)).size;
    journal.add(`${base}/findings`, 'analyze', {
      value: `Imported from a legacy session: ${notes.length} notes from ${sources} sources after iteration ${number}.${iteration.next_plan ? ` Next plan: ${iteration.next_plan}` : ''}`,
      usage: null,
    });
    journal.add(`${base}/analyze`, 'analyze', {
      value: {
        done: false,
        reason: `imported from a legacy session${iteration.next_plan ? `; next plan: ${iteration.next_plan}` : ''}`,
        nextQueries: next,
      },
      usage: null,
    });
    queries = next;
  }
  const completed = legacy.status === 'completed' && Boolean(legacy.final_report);
  const status: SessionStatus = completed ? 'completed' : legacy.status === 'error' ? 'failed' : 'interrupted';
  const endedAt = toMs(legacy.end_time, createdAt);
  const output: ResearchOutput | undefined = completed
    ? {
        report: legacy.final_report!,
        notes,
        citations: [],
        flagged: [],
        queries: asked,
        visited,
        analyst: 'imported',
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      }
    : undefined;
  return {
    session: {
      id: legacy.session_id.replace(/[^A-Za-z0-9_-]/g, '-'),
      title: defaultTitle(question),
      question,
      status,
      settings,
      workflow: { name: RESEARCH_WORKFLOW_NAME, version: RESEARCH_WORKFLOW_VERSION },
      error:
        legacy.status === 'error'
          ? { code: 'STEP_FAILED', message: legacy.error_message ?? 'the earlier tool reported an error' }
          : null,
      createdAt,
      updatedAt: endedAt,
    },
    messages: [
      { seq: 1, role: 'user', content: question, runId, phase: null, createdAt },
      ...(completed
        ? [
            {
              seq: 2,
              role: 'assistant' as const,
              content: legacy.final_report!,
              runId,
              phase: 'verify',
              createdAt: endedAt,
            },
          ]
        : []),
    ],
    runs: [
      {
        id: runId,
        number: 1,
        kind: 'initial',
        input: { question, mode: 'initial' },
        status: completed ? 'completed' : status === 'failed' ? 'failed' : 'open',
        output,
        createdAt,
        endedAt: completed ? endedAt : null,
      },
    ],
    steps: journal.steps,
    sources: [...new Map(notes.map((note) => [note.url, note])).values()].map((note) => ({
      url: note.url,
      title: note.title,
      contentHash: null,
      citation: null,
      timesConsidered: 1,
      timesSelected: 0,
      metadata: { provider: 'legacy' },
      runId,
      createdAt,
    })),
  };
}

function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** A Quarry session in the legacy layout (its first run's iterations; the latest report). */
export function snapshotToLegacy(snapshot: SessionSnapshot): LegacySession {
  const settings = parseResearchSettings(snapshot.session.settings);
  const firstRun = [...snapshot.runs].sort((a, b) => a.number - b.number)[0];
  const steps = snapshot.steps.filter((step) => step.runId === firstRun?.id);
  const output = <T>(key: string) =>
    steps.find((step) => step.key === key && step.status === 'completed')?.output as T | undefined;
  const numbers = [
    ...new Set(
      steps
        .map((step) => /^iteration-(\d+)\//.exec(step.key)?.[1])
        .filter(Boolean)
        .map(Number),
    ),
  ].sort((a, b) => a - b);
  const allContexts: { url: string; query: string; content_summary: string }[] = [];
  let previousPlan = (output<{ value: { queries: string[] } }>('plan')?.value.queries ?? []).join('\n');
  const iterations = numbers.map((number) => {
    const base = `iteration-${number}`;
    const own = steps.filter((step) => step.key.startsWith(`${base}/`));
    const reads = own.filter((step) => /\/read-\d+$/.test(step.key) && step.status === 'completed');
    const contexts = reads.map((step) => {
      const source = step.output as SourceText;
      const index = step.key.split('-').pop();
      const taken = output<{ value: Note[] }>(`${base}/notes-${index}`)?.value ?? [];
      return {
        url: source.url,
        query: source.query,
        content_summary: taken.length ? taken.map((note) => note.text).join(' ') : source.text.slice(0, 500),
      };
    });
    allContexts.push(...contexts);
    const analysis = output<{ value: { reason: string; nextQueries: string[] } }>(`${base}/analyze`)?.value;
    const entry = {
      iteration_number: number,
      start_time: iso(Math.min(...own.map((step) => step.startedAt))),
      end_time: analysis ? iso(Math.max(...own.map((step) => step.endedAt ?? step.startedAt))) : null,
      plan_generated: previousPlan,
      search_queries: own
        .filter((step) => /\/search-\d+$/.test(step.key))
        .map((step) => String((step.input as { query?: string } | undefined)?.query ?? '')),
      contexts_gathered: contexts,
      next_plan: analysis ? analysis.nextQueries.join('\n') || analysis.reason : null,
    };
    previousPlan = entry.next_plan ?? previousPlan;
    return entry;
  });
  const completedIterations = iterations
    .filter((iteration) => iteration.end_time !== null)
    .map((iteration) => iteration.iteration_number);
  const reports = snapshot.runs
    .filter((run) => run.status === 'completed')
    .map((run) => (run.output as Partial<ResearchOutput> | undefined)?.report)
    .filter((report): report is string => typeof report === 'string');
  const status = snapshot.session.status;
  return {
    session_id: snapshot.session.id,
    start_time: iso(snapshot.session.createdAt),
    end_time: status === 'completed' ? iso(snapshot.session.updatedAt) : null,
    status:
      status === 'completed'
        ? 'completed'
        : status === 'failed'
          ? 'error'
          : status === 'running'
            ? 'running'
            : 'interrupted',
    user_query: snapshot.session.question,
    system_instruction: settings.systemInstruction ?? null,
    settings: {
      max_iterations: settings.maxIterations,
      max_search_items: settings.sourcesPerQuery,
      default_model: settings.model ?? null,
      reason_model: settings.fastModel ?? settings.model ?? null,
      use_ollama: settings.model?.startsWith('ollama:') ?? false,
      use_jina: settings.search.includes('jina'),
      with_planning: true,
    },
    iterations,
    aggregated_data: {
      all_search_queries: iterations.flatMap((iteration) => iteration.search_queries),
      aggregated_contexts: allContexts,
      last_plan: previousPlan,
      last_completed_iteration: completedIterations.length ? Math.max(...completedIterations) : 0,
    },
    final_report: reports.at(-1) ?? null,
    error_message: snapshot.session.error?.message ?? null,
  };
}
