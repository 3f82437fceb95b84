import type { QuarryConfig } from '../config/quarry-config.ts';
import { Runner } from '../engine/runner.ts';
import type { WorkflowRegistry } from '../engine/workflow.ts';
import type { Store } from '../store/store.ts';
import { localQueryContext } from './local-query-context.ts';
import { createWorkflowRegistry } from './research-runtime.ts';
import type { ServiceContext } from './service-context.ts';

export type LocalContext = ServiceContext & { runner: Runner; workflows: WorkflowRegistry };

/**
 * The service context of someone acting on their own machine (the CLI, scripts, tests): the local
 * user, any folder, indexing in the foreground, a runner of this process, no per-user limits.
 */
export function localServiceContext(
  store: Store,
  config: QuarryConfig,
  options: { workflows?: WorkflowRegistry; runner?: Runner; workerId?: string; ownerId?: string } = {},
): LocalContext {
  const workflows = options.workflows ?? createWorkflowRegistry(store, config);
  return {
    ...localQueryContext(store, config, options),
    workflows,
    runner: options.runner ?? new Runner({ store, workflows, workerId: options.workerId }),
  };
}
