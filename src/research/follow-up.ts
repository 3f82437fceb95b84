import type { RunContext } from '../engine/run-context.ts';
import type { Analyst } from './analyst.ts';
import { renderSources, renumberCitations } from './citations.ts';
import { windowConversation } from './context-window.ts';
import type { ResearchSettings } from './research-settings.ts';
import type { Note, ResearchOutput } from './research-types.ts';
import { researchLoop, think, writeReport, type Ledger, type ResearchDependencies, type ResearchState } from './research-workflow.ts';

interface FollowUpContext {
  report: string;
  notes: Note[];
  asked: string[];
  visited: string[];
  conversation: string;
}

/** Everything a follow-up starts from, read from the store once and journaled (so replay agrees). */
async function loadContext(ctx: RunContext, deps: ResearchDependencies): Promise<FollowUpContext> {
  return ctx.step({ key: 'follow-up/context', phase: 'plan' }, async () => {
    const runs = await deps.store.listRuns(ctx.sessionId);
    const previous = runs.filter((run) => run.id !== ctx.runId && run.status === 'completed').map((run) => (run.output ?? {}) as Partial<ResearchOutput>);
    const notes = new Map<string, Note>();
    for (const output of previous) for (const note of output.notes ?? []) notes.set(note.id, note);
    const messages = (await deps.store.listMessages(ctx.sessionId)).filter((message) => message.runId !== ctx.runId);
    return {
      report: [...previous].reverse().find((output) => output.report)?.report ?? '',
      notes: [...notes.values()],
      asked: previous.flatMap((output) => output.queries ?? []),
      visited: previous.flatMap((output) => output.visited ?? []),
      conversation: await windowConversation(messages),
    };
  });
}

/**
 * A question on a finished session: answered from the stored notes when they cover it, otherwise
 * researched further into a new report version. Depends only on the store, never on process memory.
 */
export async function runFollowUp(ctx: RunContext, deps: ResearchDependencies, input: { question: string; settings: ResearchSettings; analyst: Analyst; ledger: Ledger }): Promise<ResearchOutput> {
  const { question, settings, analyst, ledger } = input;
  const context = await loadContext(ctx, deps);
  const assessment = await think(ctx, ledger, { key: 'follow-up/assess', phase: 'analyze' }, analyst.assessFollowUp({ question, notes: context.notes, conversation: context.conversation, settings }));
  if (assessment.action === 'answer' && context.notes.length > 0) {
    const numbers = new Map<string, number>();
    for (const note of context.notes) if (!numbers.has(note.url)) numbers.set(note.url, numbers.size + 1);
    const draft = await think(ctx, ledger, { key: 'follow-up/answer', phase: 'write' }, analyst.answer({ question, notes: context.notes, report: context.report, conversation: context.conversation, citationFor: Object.fromEntries(numbers), settings }));
    const { text, sources } = renumberCitations(draft, numbers, new Map(context.notes.map((note) => [note.url, note.title])));
    const answer = `${text}\n\n${renderSources(sources)}`.trim();
    await ctx.step({ key: 'follow-up/publish', phase: 'write' }, async () => {
      const existing = await deps.store.listMessages(ctx.sessionId, { runId: ctx.runId, phase: 'write' });
      if (!existing.some((message) => message.role === 'assistant')) {
        await deps.store.appendMessage({ sessionId: ctx.sessionId, role: 'assistant', content: answer, runId: ctx.runId, phase: 'write', fence: ctx.fence });
      }
    });
    return { answer, notes: [], citations: sources, flagged: [], queries: [], visited: [], analyst: analyst.name, usage: ledger.toJSON() };
  }
  const state: ResearchState = { notes: [...context.notes], asked: [...context.asked], visited: [...context.visited] };
  const known = state.notes.length;
  const plan = await think(ctx, ledger, { key: 'follow-up/plan', phase: 'plan' }, analyst.plan({ question, settings, context: context.conversation }));
  await researchLoop(ctx, deps, { question, settings, analyst, ledger, state, prefix: 'follow-up/', firstQueries: plan.queries });
  const written = await writeReport(ctx, deps, { question, settings, analyst, ledger, notes: state.notes, prefix: 'follow-up/' });
  return { ...written, notes: state.notes.slice(known), queries: state.asked.slice(context.asked.length), visited: state.visited, analyst: analyst.name, usage: ledger.toJSON() };
}
