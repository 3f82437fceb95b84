import type { Workflow } from '../engine/workflow.ts';
import type { Analyst } from './analyst.ts';
import { type CarriedResearch, type Seed, seedFromCarried } from './carried-research.ts';
import { clarifiedQuestion } from './clarify.ts';
import { runFollowUp } from './follow-up.ts';
import type { ResearchContext } from './research-context.ts';
import type { ResearchDependencies } from './research-dependencies.ts';
import { type Gathered, researchLoop } from './research-loop.ts';
import { parseResearchSettings, type ResearchSettings } from './research-settings.ts';
import { emptyResearchState } from './research-state.ts';
import type { ResearchOutput } from './research-types.ts';
import { stepKeys } from './step-keys.ts';
import type { ResearchStepOutputs } from './step-outputs.ts';
import { Ledger, think } from './think.ts';
import { writeReport } from './write-report.ts';

export const RESEARCH_WORKFLOW_NAME = 'research';
/**
 * 3: notes carry checked quotes, each iteration ends with a findings summary, sections are grounded
 * in notes, and every claim is verified (with a model's entailment check when one is configured).
 * 4: searches ask for four candidates per source read and the analyst chooses among them; local
 * results are read by their provider (the passage in its section), not carried in the search.
 */
export const RESEARCH_WORKFLOW_VERSION = 4;

export interface ResearchRunInput {
  question: string;
  mode?: 'initial' | 'follow-up';
  /** Research done elsewhere that this run carries on (an imported session); see `carried-research.ts`. */
  carried?: CarriedResearch;
  /** Instructions for this run only, in place of the session's `systemInstruction`. */
  instructions?: string;
}

/** The title a session gets before its analyst names it: the trimmed question. */
export function defaultTitle(question: string): string {
  const clean = question.trim().replace(/\s+/g, ' ');
  return clean.length <= 120 ? clean : `${clean.slice(0, 119)}…`;
}

/**
 * The first step of a run that carries research on from elsewhere: its notes, asked queries and
 * visited pages, as the run's input describes them; its pages become the session's sources.
 */
function carryOn(ctx: ResearchContext, question: string, carried: CarriedResearch): Promise<Seed> {
  return ctx.step({ key: stepKeys.carried, phase: 'plan' }, async () => {
    const seed = seedFromCarried(question, carried);
    for (const url of seed.visited) {
      const note = seed.notes.find((each) => each.url === url)!;
      await ctx.session.upsertSource({
        url,
        title: note.title,
        considered: 1,
        metadata: { provider: 'carried', fetched: false, error: null },
      });
      await ctx.emit('source-found', { url, title: note.title, fetched: false, query: note.query });
    }
    return seed;
  });
}

/**
 * With `clarify` on and a model to judge it, asks the person about an ambiguous question before
 * anything else, and waits (durably, like an outline review) for the answer: the question research
 * then works on carries it. A clear question, a skip, or no model leaves the question as asked.
 */
async function clarify(
  ctx: ResearchContext,
  ledger: Ledger,
  analyst: Analyst,
  question: string,
  settings: ResearchSettings,
): Promise<string> {
  const call = settings.clarify ? analyst.clarify({ question, settings }) : null;
  if (!call) return question;
  const { questions } = await think(ctx, ledger, { key: stepKeys.clarify, phase: 'plan' }, call);
  if (questions.length === 0) return question;
  const answer = await ctx.waitForInput<string>({ key: stepKeys.clarifyAnswer, phase: 'plan', payload: { questions } });
  return clarifiedQuestion(question, answer);
}

/**
 * The deep-research workflow: (clarify →) plan → (search → read → summarize → analyze)* → outline →
 * write → verify.
 */
export function researchWorkflow(deps: ResearchDependencies): Workflow<ResearchRunInput, ResearchOutput> {
  return {
    name: RESEARCH_WORKFLOW_NAME,
    version: RESEARCH_WORKFLOW_VERSION,
    async run(ctx, input) {
      const stored = parseResearchSettings(ctx.settings);
      const settings = input.instructions ? { ...stored, systemInstruction: input.instructions } : stored;
      const analyst = deps.analystFor(settings);
      const ledger = new Ledger();
      if (input.mode === 'follow-up')
        return runFollowUp(ctx, deps, { question: input.question, settings, analyst, ledger });
      const question = input.carried ? input.question : await clarify(ctx, ledger, analyst, input.question, settings);
      const title = await think(
        ctx,
        ledger,
        { key: stepKeys.title, phase: 'plan' },
        analyst.title(input.question, settings),
      );
      await ctx.step({ key: stepKeys.titleApply, phase: 'plan' }, async () => {
        const session = await ctx.session.read();
        // A title the user chose is never replaced.
        if (session.title === defaultTitle(input.question) && title.trim())
          await ctx.session.rename(title.trim().slice(0, 300));
      });
      const seed = input.carried ? await carryOn(ctx, input.question, input.carried) : null;
      const firstQueries =
        seed && input.carried!.nextQueries.length > 0
          ? input.carried!.nextQueries
          : (
              await think<ResearchStepOutputs['plan']['value']>(
                ctx,
                ledger,
                { key: stepKeys.plan, phase: 'plan' },
                analyst.plan({ question, settings }),
              )
            ).queries;
      const gathered: Gathered = seed
        ? { notes: seed.notes, asked: seed.asked, visited: seed.visited, state: seed.state }
        : { notes: [], asked: [], visited: [], state: emptyResearchState() };
      await researchLoop(ctx, deps, {
        question,
        settings,
        analyst,
        ledger,
        gathered,
        scope: '',
        firstQueries,
        firstIteration: (seed?.iterations ?? 0) + 1,
      });
      const written = await writeReport(ctx, {
        question,
        settings,
        analyst,
        ledger,
        notes: gathered.notes,
        state: gathered.state,
        scope: '',
      });
      return {
        ...written,
        notes: gathered.notes,
        queries: gathered.asked,
        visited: gathered.visited,
        state: gathered.state,
        analyst: analyst.name,
        usage: ledger.toJSON(),
      };
    },
  };
}
