import { z } from 'zod';
import { type CarriedIteration, type CarriedResearch, seedFromCarried } from '../research/carried-research.ts';
import { parseResearchSettings, type ResearchSettings } from '../research/research-settings.ts';
import type { ResearchOutput } from '../research/research-types.ts';
import {
  defaultTitle,
  RESEARCH_WORKFLOW_NAME,
  RESEARCH_WORKFLOW_VERSION,
  type ResearchRunInput,
} from '../research/research-workflow.ts';
import { type IterationStepKey, parseStepKey, stepKeys } from '../research/step-keys.ts';
import { type ResearchStepKind, runReport, stepOutput } from '../research/step-outputs.ts';
import { invalidInput } from '../shared/errors.ts';
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
      // The persistence plan these files follow keeps summaries as strings; some tools keep objects.
      aggregated_contexts: z.array(z.union([z.string(), context])).optional(),
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

/**
 * A Quarry session that carries the legacy session's research on as data (`CarriedResearch`, in the
 * run's input): resuming it seeds notes, asked queries and visited pages from that data and
 * continues at iteration `last_completed_iteration + 1` with the last plan's queries. No journal
 * record is forged: the workflow journals its own steps under its own keys.
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
  const carriedIterations: CarriedIteration[] = iterations.map((iteration) => ({
    number: iteration.iteration_number,
    startedAt: iteration.start_time ? toMs(iteration.start_time, createdAt) : null,
    // The iterations the file counts as completed are; a later one was under way.
    endedAt:
      iteration.iteration_number <= lastCompleted ? toMs(iteration.end_time ?? iteration.start_time, createdAt) : null,
    plan: iteration.plan_generated ?? null,
    queries: iteration.search_queries,
    contexts: iteration.contexts_gathered.map((item) => ({
      url: item.url,
      query: item.query,
      summary: item.content_summary,
    })),
    nextPlan: iteration.next_plan ?? null,
  }));
  const next = iterations[lastCompleted];
  const carried: CarriedResearch = {
    from: 'a legacy session file',
    iterations: carriedIterations,
    nextQueries: next?.search_queries.length
      ? next.search_queries
      : queriesFromPlan(
          iterations[lastCompleted - 1]?.next_plan ?? legacy.aggregated_data.last_plan,
          settings,
          question,
        ),
    // Summaries kept without an address (the persistence plan's strings) inform; they cannot be cited.
    summaries: (legacy.aggregated_data.aggregated_contexts ?? []).flatMap((item) =>
      typeof item === 'string' &&
      !iterations.some((iteration) => iteration.contexts_gathered.some((each) => each.content_summary === item))
        ? [item]
        : [],
    ),
  };
  const completed = legacy.status === 'completed' && Boolean(legacy.final_report);
  const status: SessionStatus = completed ? 'completed' : legacy.status === 'error' ? 'failed' : 'interrupted';
  const endedAt = toMs(legacy.end_time, createdAt);
  const seed = seedFromCarried(question, carried);
  const output: ResearchOutput | undefined = completed
    ? {
        report: legacy.final_report!,
        notes: seed.notes,
        citations: [],
        flagged: [],
        queries: seed.asked,
        visited: seed.visited,
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
        input: { question, mode: 'initial', carried } satisfies ResearchRunInput,
        status: completed ? 'completed' : status === 'failed' ? 'failed' : 'open',
        output,
        createdAt,
        endedAt: completed ? endedAt : null,
      },
    ],
    steps: [],
    sources: [],
  };
}

function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/**
 * A Quarry session in the legacy layout, as the persistence plan writes it (`aggregated_contexts` a
 * list of summaries): the first run's iterations, those it carried over from elsewhere first, then
 * its own from the journal; the latest report.
 */
export function snapshotToLegacy(snapshot: SessionSnapshot): LegacySession {
  const settings = parseResearchSettings(snapshot.session.settings);
  const firstRun = [...snapshot.runs].sort((a, b) => a.number - b.number)[0];
  const carried = (firstRun?.input as ResearchRunInput | undefined)?.carried;
  const steps = snapshot.steps.filter((step) => step.runId === firstRun?.id);
  const output = <K extends ResearchStepKind>(key: string, kind: K) =>
    stepOutput(
      steps.find((step) => step.key === key && step.status === 'completed'),
      kind,
    );
  const ownSteps = new Map<number, { key: string; step: StepDetail; parsed: IterationStepKey }[]>();
  for (const step of steps) {
    const parsed = parseStepKey(step.key);
    if (!parsed || !('iteration' in parsed) || parsed.scope !== '') continue;
    ownSteps.set(parsed.iteration, [...(ownSteps.get(parsed.iteration) ?? []), { key: step.key, step, parsed }]);
  }
  const carriedIterations = (carried?.iterations ?? []).map((iteration) => ({
    iteration_number: iteration.number,
    start_time: iso(iteration.startedAt),
    end_time: iso(iteration.endedAt),
    plan_generated: iteration.plan,
    search_queries: iteration.queries,
    contexts_gathered: iteration.contexts.map((item) => ({
      url: item.url,
      query: item.query,
      content_summary: item.summary,
    })),
    next_plan: iteration.nextPlan,
  }));
  // The run's own iterations replace an unfinished carried one of the same number.
  const carriedDone = carriedIterations.filter(
    (iteration) => iteration.end_time !== null || !ownSteps.has(iteration.iteration_number),
  );
  let previousPlan = carried?.nextQueries.join('\n') ?? (output(stepKeys.plan, 'plan')?.value.queries ?? []).join('\n');
  const ownIterations = [...ownSteps.keys()]
    .filter((number) => !carriedDone.some((iteration) => iteration.iteration_number === number))
    .sort((a, b) => a - b)
    .map((number) => {
      const own = ownSteps.get(number)!;
      const contexts = own
        .filter(({ parsed, step }) => parsed.kind === 'read' && step.status === 'completed')
        .map(({ step, parsed }) => {
          const source = stepOutput(step, 'read')!;
          const taken = output(stepKeys.notes('', number, parsed.index ?? 0), 'notes')?.value ?? [];
          return {
            url: source.url,
            query: source.query,
            content_summary: taken.length ? taken.map((note) => note.text).join(' ') : source.text.slice(0, 500),
          };
        });
      const analysis = output(stepKeys.analyze('', number), 'analyze')?.value;
      const entry = {
        iteration_number: number,
        start_time: iso(Math.min(...own.map(({ step }) => step.startedAt))),
        end_time: analysis ? iso(Math.max(...own.map(({ step }) => step.endedAt ?? step.startedAt))) : null,
        plan_generated: previousPlan,
        search_queries: own
          .filter(({ parsed }) => parsed.kind === 'search')
          .map(({ step }) => String((step.input as { query?: string } | undefined)?.query ?? '')),
        contexts_gathered: contexts,
        next_plan: analysis ? analysis.nextQueries.join('\n') || analysis.reason : null,
      };
      previousPlan = entry.next_plan ?? previousPlan;
      return entry;
    });
  const iterations = [...carriedDone, ...ownIterations];
  const allContexts = iterations.flatMap((iteration) => iteration.contexts_gathered);
  const completedIterations = iterations
    .filter((iteration) => iteration.end_time !== null)
    .map((iteration) => iteration.iteration_number);
  const reports = snapshot.runs.map(runReport).filter((report): report is string => report !== undefined);
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
      aggregated_contexts: [...allContexts.map((item) => item.content_summary), ...(carried?.summaries ?? [])],
      last_plan: previousPlan,
      last_completed_iteration: completedIterations.length ? Math.max(...completedIterations) : 0,
    },
    final_report: reports.at(-1) ?? null,
    error_message: snapshot.session.error?.message ?? null,
  };
}
