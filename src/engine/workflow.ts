import { QuarryError } from '../shared/errors.ts';
import type { RunContext } from './run-context.ts';

/**
 * A workflow is ordinary async TypeScript. Everything non-deterministic (model calls, search,
 * fetch, the clock, randomness, human input) goes through `ctx`, which journals it, so running the
 * workflow again replays completed steps and continues at the first step without a record.
 */
export interface Workflow<Input = unknown, Output = unknown> {
  /** Stored with each session; a session runs only under the workflow of its name. */
  readonly name: string;
  /** Bumped when a change makes old journals unreplayable; sessions of another version are refused. */
  readonly version: number;
  run(ctx: RunContext, input: Input): Promise<Output>;
}

/** The workflows a runner can execute, by name. */
export class WorkflowRegistry {
  private readonly workflows = new Map<string, Workflow<never, unknown>>();

  constructor(workflows: Workflow<never, unknown>[] = []) {
    for (const workflow of workflows) this.register(workflow);
  }

  register(workflow: Workflow<never, unknown>): this {
    this.workflows.set(workflow.name, workflow);
    return this;
  }

  /** Throws `WORKFLOW_NOT_FOUND` for an unknown name. */
  get(name: string): Workflow<unknown, unknown> {
    const workflow = this.workflows.get(name);
    if (!workflow) {
      throw new QuarryError('WORKFLOW_NOT_FOUND', `No workflow named "${name}" is installed in this Quarry.`, {
        details: { workflow: name },
      });
    }
    return workflow as Workflow<unknown, unknown>;
  }
}
