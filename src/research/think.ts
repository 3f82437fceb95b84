import type { AnalystCall, TokenUsage } from './analyst.ts';
import type { ResearchContext } from './research-context.ts';
import type { ResearchSettings } from './research-settings.ts';
import type { ResearchPhase } from './step-keys.ts';
import type { Thought } from './step-outputs.ts';

/** Token and cost ledger of one run, rebuilt on replay from the recorded usage. */
export class Ledger {
  inputTokens = 0;
  outputTokens = 0;
  costUsd = 0;
  add(usage: TokenUsage | undefined): void {
    this.inputTokens += usage?.inputTokens ?? 0;
    this.outputTokens += usage?.outputTokens ?? 0;
    this.costUsd += usage?.costUsd ?? 0;
  }
  exceeded(settings: ResearchSettings): boolean {
    if (settings.tokenBudget !== undefined && this.inputTokens + this.outputTokens >= settings.tokenBudget) return true;
    return settings.costBudgetUsd !== undefined && this.costUsd >= settings.costBudgetUsd;
  }
  toJSON() {
    return { inputTokens: this.inputTokens, outputTokens: this.outputTokens, costUsd: Number(this.costUsd.toFixed(6)) };
  }
}

export interface ThinkOptions<T> {
  key: string;
  phase: ResearchPhase;
  /**
   * Runs inside the step on the analyst's output before it is recorded (checks, events), so the
   * journal keeps what the run went on with and replay needs no recomputation.
   */
  finish?: (value: T) => Promise<T> | T;
}

/**
 * Runs an analyst call as a journaled step: an `llm` step (prompt, usage) for model calls, a plain
 * step otherwise. The recorded output carries the usage, so the ledger is the same on replay.
 */
export async function think<T>(
  ctx: ResearchContext,
  ledger: Ledger,
  options: ThinkOptions<T>,
  call: AnalystCall<T>,
): Promise<T> {
  const finish = options.finish ?? ((value: T) => value);
  const recorded: Thought<T> = call.model
    ? await ctx.llm<Thought<T>>(
        { key: options.key, phase: options.phase, model: call.model, system: call.system, prompt: call.prompt ?? '' },
        async (signal) => {
          const result = await call.run(signal);
          return { output: { value: await finish(result.output), usage: result.usage ?? null }, usage: result.usage };
        },
      )
    : await ctx.step<Thought<T>>({ key: options.key, phase: options.phase }, async (signal) => ({
        value: await finish((await call.run(signal)).output),
        usage: null,
      }));
  ledger.add(recorded.usage ?? undefined);
  return recorded.value;
}
