import type { Workflow } from '../engine/workflow.ts';
import { runFollowUp } from './follow-up.ts';
import type { ResearchDependencies } from './research-dependencies.ts';
import { type Gathered, researchLoop } from './research-loop.ts';
import { parseResearchSettings } from './research-settings.ts';
import { emptyResearchState } from './research-state.ts';
import type { ResearchOutput } from './research-types.ts';
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
}

/** The title a session gets before its analyst names it: the trimmed question. */
export function defaultTitle(question: string): string {
  const clean = question.trim().replace(/\s+/g, ' ');
  return clean.length <= 120 ? clean : `${clean.slice(0, 119)}…`;
}

/** The deep-research workflow: plan → (search → read → summarize → analyze)* → outline → write → verify. */
export function researchWorkflow(deps: ResearchDependencies): Workflow<ResearchRunInput, ResearchOutput> {
  return {
    name: RESEARCH_WORKFLOW_NAME,
    version: RESEARCH_WORKFLOW_VERSION,
    async run(ctx, input) {
      const settings = parseResearchSettings(ctx.settings);
      const analyst = deps.analystFor(settings);
      const ledger = new Ledger();
      if (input.mode === 'follow-up')
        return runFollowUp(ctx, deps, { question: input.question, settings, analyst, ledger });
      const title = await think(ctx, ledger, { key: 'title', phase: 'plan' }, analyst.title(input.question, settings));
      await ctx.step({ key: 'title/apply', phase: 'plan' }, async () => {
        const session = await deps.store.getSession(ctx.sessionId);
        // A title the user chose is never replaced.
        if (session.title === defaultTitle(input.question) && title.trim())
          await deps.store.updateSession(ctx.sessionId, { title: title.trim().slice(0, 300) });
      });
      const plan = await think(
        ctx,
        ledger,
        { key: 'plan', phase: 'plan' },
        analyst.plan({ question: input.question, settings }),
      );
      const gathered: Gathered = { notes: [], asked: [], visited: [], state: emptyResearchState() };
      await researchLoop(ctx, deps, {
        question: input.question,
        settings,
        analyst,
        ledger,
        gathered,
        prefix: '',
        firstQueries: plan.queries,
      });
      const written = await writeReport(ctx, deps, {
        question: input.question,
        settings,
        analyst,
        ledger,
        notes: gathered.notes,
        state: gathered.state,
        prefix: '',
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
