import type { Analyst } from './analyst.ts';
import { citedNumbers, displayLocation } from './citations.ts';
import { windowConversation } from './context-window.ts';
import { citable } from './quotes.ts';
import { renumberDraft, streamed } from './report-stream.ts';
import type { ResearchContext } from './research-context.ts';
import type { ResearchDependencies } from './research-dependencies.ts';
import { type Gathered, researchLoop } from './research-loop.ts';
import type { ResearchSettings } from './research-settings.ts';
import { readResearchState } from './research-state.ts';
import type { CitedSource, Note, ResearchOutput, ResearchState } from './research-types.ts';
import { FOLLOW_UP_SCOPE, stepKeys } from './step-keys.ts';
import { runOutput, runReport } from './step-outputs.ts';
import { type Ledger, think } from './think.ts';
import { checkClaims, flaggedClaims, settleClaims } from './verify-claims.ts';
import { judgeClaims, writeReport } from './write-report.ts';

interface FollowUpContext {
  report: string;
  notes: Note[];
  asked: string[];
  visited: string[];
  conversation: string;
  state: ResearchState;
  /**
   * The session's citation map: the latest report's numbers first, then every other source of the
   * session's notes, so `[2]` in an answer is the report's `[2]`.
   */
  citations: CitedSource[];
}

/** Everything a follow-up starts from, read from the store once and journaled (so replay agrees). */
async function loadContext(ctx: ResearchContext): Promise<FollowUpContext> {
  return ctx.step({ key: stepKeys.followUpContext, phase: 'plan' }, async () => {
    const runs = await ctx.session.runs();
    const previous = runs
      .filter((run) => run.id !== ctx.runId && run.status === 'completed')
      .map((run) => runOutput(run) ?? {});
    const notes = new Map<string, Note>();
    for (const output of previous) for (const note of output.notes ?? []) notes.set(note.id, note);
    const messages = (await ctx.session.messages()).filter((message) => message.runId !== ctx.runId);
    const latestReport = [...previous].reverse().find((output) => output.report);
    const citations: CitedSource[] = [...(latestReport?.citations ?? [])];
    const numbered = new Set(citations.map((source) => source.url));
    for (const note of citable([...notes.values()])) {
      if (numbered.has(note.url)) continue;
      numbered.add(note.url);
      citations.push({ number: citations.length + 1, url: note.url, title: note.title });
    }
    return {
      report: latestReport?.report ?? '',
      notes: [...notes.values()],
      asked: previous.flatMap((output) => output.queries ?? []),
      visited: previous.flatMap((output) => output.visited ?? []),
      conversation: await windowConversation(messages),
      state: readResearchState([...previous].reverse().find((output) => output.state)?.state),
      citations,
    };
  });
}

/**
 * The sources an answer cites, each under the number the answer uses. Not a numbered Markdown list:
 * the answer's numbers skip (it cites [2] and [5]), and every renderer would renumber a list 1, 2.
 */
function renderAnswerSources(sources: CitedSource[]): string {
  if (sources.length === 0) return '';
  return `**Sources**\n\n${sources.map((source) => `- [${source.number}] ${source.title} — <${displayLocation(source.url)}>`).join('\n')}\n`;
}

/**
 * The follow-up's answer, streamed as it is written, citing the given sources by their numbers
 * (numbers the session already uses map to themselves; unknown ones are dropped).
 */
async function draftAnswer(
  ctx: ResearchContext,
  input: { question: string; settings: ResearchSettings; analyst: Analyst; ledger: Ledger },
  from: { notes: Note[]; report: string; conversation: string; citations: CitedSource[] },
) {
  const byNumber = new Map(from.citations.map((source) => [source.number, source]));
  const urlByNumber = new Map(from.citations.map((source) => [source.number, source.url]));
  const identity = new Map([...byNumber.keys()].map((number) => [number, number]));
  const known = (number: number) => urlByNumber.has(number);
  const draft = await think(
    ctx,
    input.ledger,
    { key: stepKeys.followUpAnswer, phase: 'write' },
    streamed(
      ctx,
      { key: stepKeys.followUpAnswer, message: true },
      { opening: '', closing: '' },
      identity,
      known,
      (onDelta) =>
        input.analyst.answer({
          question: input.question,
          notes: from.notes,
          report: from.report,
          conversation: from.conversation,
          citationFor: Object.fromEntries(from.citations.map((source) => [source.url, source.number])),
          settings: input.settings,
          onDelta,
        }),
    ),
  );
  return { draft, byNumber, urlByNumber, identity, known };
}

/**
 * A follow-up answered from the stored notes: cited against the session's citation map, every
 * claim checked as a report's are, unknown numbers removed and recorded.
 */
async function answerFromNotes(
  ctx: ResearchContext,
  input: { question: string; settings: ResearchSettings; analyst: Analyst; ledger: Ledger },
  context: FollowUpContext,
): Promise<ResearchOutput> {
  const { question, settings, analyst, ledger } = input;
  const notes = citable(context.notes);
  const { draft, byNumber, urlByNumber, identity, known } = await draftAnswer(ctx, input, {
    notes,
    report: context.report,
    conversation: context.conversation,
    citations: context.citations,
  });
  // Quoted passages (no model) claim nothing of their own to check; see `writeReport`.
  const drafts = analyst.usesModel ? checkClaims([{ title: 'Answer', text: draft }], urlByNumber, notes) : [];
  const judgments = await judgeClaims(ctx, { question, settings, analyst, ledger, scope: FOLLOW_UP_SCOPE }, drafts);
  return ctx.step({ key: stepKeys.followUpPublish, phase: 'write' }, async () => {
    const claims = settleClaims(drafts, judgments, identity);
    // The answer as it streamed, then its flagged claims and its sources.
    const text = renumberDraft(draft, new Map(identity), known);
    const cited = [...new Set(citedNumbers(text))].sort((a, b) => a - b).map((number) => byNumber.get(number)!);
    const answer = `${text}\n\n${flaggedClaims(claims)}${renderAnswerSources(cited)}`.trimEnd();
    const existing = await ctx.session.messages({ thisRun: true, phase: 'write' });
    if (!existing.some((message) => message.role === 'assistant')) {
      await ctx.session.appendMessage({
        role: 'assistant',
        content: answer,
        phase: 'write',
      });
    }
    const flagged = claims.filter((claim) => claim.verdict !== 'supported');
    for (const claim of flagged) await ctx.emit('claim-flag', claim);
    return {
      answer,
      notes: [],
      citations: cited,
      answerCitations: cited,
      flagged,
      claims,
      state: context.state,
      queries: [],
      visited: [],
      analyst: analyst.name,
      usage: ledger.toJSON(),
    };
  });
}

/**
 * The follow-up's answer in the conversation, when the analyst has no model: its few best passages
 * from every note the session has, quoted whole, cited with the new report version's numbers (a
 * source that version does not cite gets the next number); posted once as the assistant's reply,
 * with its sources.
 */
async function answerInConversation(
  ctx: ResearchContext,
  input: { question: string; settings: ResearchSettings; analyst: Analyst; ledger: Ledger },
  notes: Note[],
  written: { citations: CitedSource[] },
): Promise<{ answer: string; citations?: CitedSource[] }> {
  const citations: CitedSource[] = [...written.citations];
  const numbered = new Set(citations.map((source) => source.url));
  for (const note of citable(notes)) {
    if (numbered.has(note.url)) continue;
    numbered.add(note.url);
    citations.push({ number: citations.length + 1, url: note.url, title: note.title });
  }
  const { draft, byNumber, urlByNumber, identity, known } = await draftAnswer(ctx, input, {
    notes: citable(notes),
    report: '',
    conversation: '',
    citations,
  });
  const published = await ctx.step({ key: stepKeys.followUpAnswerPublish, phase: 'write' }, async () => {
    const claims = input.analyst.usesModel
      ? settleClaims(checkClaims([{ title: 'Answer', text: draft }], urlByNumber, citable(notes)), new Map(), identity)
      : [];
    const text = renumberDraft(draft, new Map(identity), known);
    const cited = [...new Set(citedNumbers(text))]
      .sort((a, b) => a - b)
      .flatMap((number) => byNumber.get(number) ?? []);
    const versions = (await ctx.session.runs()).filter(
      (run) => run.id !== ctx.runId && runReport(run) !== undefined,
    ).length;
    const answer = `${text}\n\n${flaggedClaims(claims)}${renderAnswerSources(cited)}\n_Researched further: report version ${versions + 1} has the rest._`;
    const existing = await ctx.session.messages({ thisRun: true, phase: 'write' });
    if (!existing.some((message) => message.role === 'assistant')) {
      await ctx.session.appendMessage({
        role: 'assistant',
        content: answer,
        phase: 'write',
      });
    }
    return { answer, citations: cited } as { answer: string; citations?: CitedSource[] } | string;
  });
  // A run journaled before answers kept their own numbers stored the answer alone.
  return typeof published === 'string' ? { answer: published } : published;
}

/**
 * A question on a finished session: answered from the stored notes when they cover it, otherwise
 * researched further into a new report version, starting from the research state the session kept.
 * Depends only on the store, never on process memory.
 */
export async function runFollowUp(
  ctx: ResearchContext,
  deps: ResearchDependencies,
  input: { question: string; settings: ResearchSettings; analyst: Analyst; ledger: Ledger },
): Promise<ResearchOutput> {
  const { question, settings, analyst, ledger } = input;
  const context = await loadContext(ctx);
  const assessment = await think(
    ctx,
    ledger,
    { key: stepKeys.followUpAssess, phase: 'analyze' },
    analyst.assessFollowUp({ question, notes: citable(context.notes), conversation: context.conversation, settings }),
  );
  if (assessment.action === 'answer' && citable(context.notes).length > 0) return answerFromNotes(ctx, input, context);
  const gathered: Gathered = {
    notes: [...context.notes],
    asked: [...context.asked],
    visited: [...context.visited],
    state: context.state,
  };
  const known = gathered.notes.length;
  const plan = await think(
    ctx,
    ledger,
    { key: stepKeys.followUpPlan, phase: 'plan' },
    analyst.plan({ question, settings, context: context.conversation, state: context.state }),
  );
  await researchLoop(ctx, deps, {
    question,
    settings,
    analyst,
    ledger,
    gathered,
    scope: FOLLOW_UP_SCOPE,
    firstQueries: plan.queries,
  });
  // The new version answers the follow-up from what this run found (the earlier notes were chosen,
  // and scored, for the earlier question), or from everything when it found nothing new.
  const found = citable(gathered.notes.slice(known));
  const offline = !analyst.usesModel;
  const written = await writeReport(ctx, {
    question,
    settings,
    analyst,
    ledger,
    notes: found.length > 0 ? gathered.notes.slice(known) : gathered.notes,
    state: gathered.state,
    scope: FOLLOW_UP_SCOPE,
    // Without a model the report is quotes in the order of the sources' sections: the conversation
    // gets the few sentences that best answer the follow-up instead (below).
    post: !offline,
  });
  const answer = offline ? await answerInConversation(ctx, input, gathered.notes, written) : undefined;
  return {
    ...written,
    ...(answer ? { answer: answer.answer, ...(answer.citations ? { answerCitations: answer.citations } : {}) } : {}),
    notes: gathered.notes.slice(known),
    queries: gathered.asked.slice(context.asked.length),
    visited: gathered.visited,
    state: gathered.state,
    analyst: analyst.name,
    usage: ledger.toJSON(),
  };
}
