import type { Runner } from '../engine/runner.ts';
import type { WorkflowRegistry } from '../engine/workflow.ts';
import type { ServiceContext } from '../service/service-context.ts';
import type { Store } from '../store/store.ts';

/** What the server is built from; `serve.ts` chooses the concrete store and runner. */
export interface ServerDependencies {
  store: Store;
  workflows: WorkflowRegistry;
  /** The in-process runner (absent on API-only nodes: `serve --no-runner`). */
  runner?: Runner;
  env: NodeJS.ProcessEnv;
  /** Sources for sessions created without their own (and for the chat endpoint). */
  defaults: { docs: string[]; search: string[] };
  /** Seconds between SSE heartbeats. Default 15. */
  heartbeatSeconds?: number;
}

/** Hono's typed context: each request carries the service context of its user. */
export interface AppEnv {
  Variables: { context: ServiceContext & { env: NodeJS.ProcessEnv } };
}
