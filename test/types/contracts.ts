/**
 * Contracts the compiler holds (checked by `tsc --noEmit`, part of `npm test`; nothing here runs).
 * Each `@ts-expect-error` marks a mistake that must not compile: if it ever compiles, the directive
 * itself is an error and the type check fails.
 */
import type { ResearchContext } from '../../src/research/research-context.ts';
import { stepOutput } from '../../src/research/step-outputs.ts';
import type { StepRecord } from '../../src/store/store.ts';

export function misspelledPhase(ctx: ResearchContext) {
  // @ts-expect-error a phase outside the research workflow's vocabulary
  void ctx.step({ key: 'iteration-1/read-0', phase: 'raed' }, () => null);
  void ctx.step({ key: 'iteration-1/read-0', phase: 'read' }, () => null);
}

export function wrongStepOutputRead(step: StepRecord) {
  // A read step journals the source itself, not a thought with a value.
  // @ts-expect-error `value` is not what a read step stores
  void stepOutput(step, 'read')?.value;
  void stepOutput(step, 'read')?.text;
  // @ts-expect-error a notes step stores its notes under `value`
  void stepOutput(step, 'notes')?.text;
  void stepOutput(step, 'notes')?.value.map((note) => note.text);
  // @ts-expect-error no such kind of research step
  void stepOutput(step, 'reed');
}
