import type { Runner } from '../engine/runner.ts';
import type { WorkflowRegistry } from '../engine/workflow.ts';
import type { Store } from '../store/store.ts';

/** What every service operation receives: the store, the acting user, and the engine. */
export interface ServiceContext {
  store: Store;
  /** The acting user; every read and write is scoped to their sessions. `local` when there are no users. */
  ownerId: string;
  workflows?: WorkflowRegistry;
  /** The runner of this process, when it executes sessions (foreground CLI, server, worker). */
  runner?: Runner;
}

export const LOCAL_OWNER = 'local';
