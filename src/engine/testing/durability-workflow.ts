import type { Workflow } from '../workflow.ts';
import type { Probe } from './probe.ts';

export interface DurabilityOutput {
  report: string;
  startedAt: number;
  pick: number;
}

/** The keys whose work the probe sees, in the order a run reaches them. */
export const probedKeys = ['plan', 'search-0', 'search-1', 'search-2', 'summarize', 'write'] as const;

/**
 * A small workflow with everything the engine journals: the clock, a step, parallel steps, an LLM
 * step, a random draw and a wait for input. Its report depends only on recorded values.
 */
export function durabilityWorkflow(probe: Probe, version = 1): Workflow<{ topic: string }, DurabilityOutput> {
  return {
    name: 'durability-test',
    version,
    async run(ctx, input) {
      const startedAt = await ctx.now('started-at');
      const plan = await ctx.step({ key: 'plan', phase: 'plan', input }, () =>
        probe.call('plan', () => ({
          queries: [`${input.topic} basics`, `${input.topic} history`, `${input.topic} costs`],
        })),
      );
      const results = await Promise.all(
        plan.queries.map((query, index) =>
          ctx.step({ key: `search-${index}`, phase: 'search', input: { query } }, () =>
            probe.call(`search-${index}`, () => `results for "${query}"`),
          ),
        ),
      );
      const summary = await ctx.llm(
        {
          key: 'summarize',
          phase: 'analyze',
          model: 'fake:model',
          system: 'Summarize the results.',
          prompt: results.join('\n'),
        },
        () =>
          probe.call('summarize', () => ({
            output: `${results.length} results about ${input.topic}`,
            usage: { inputTokens: 42, outputTokens: 7 },
          })),
      );
      const pick = await ctx.random('pick');
      const review = await ctx.waitForInput<string>({ key: 'review', phase: 'review', payload: { summary } });
      const report = await ctx.step({ key: 'write', phase: 'write' }, () =>
        probe.call('write', () => `Report on ${input.topic}: ${summary}. Reviewer said: ${review}.`),
      );
      return { report, startedAt, pick };
    },
  };
}
