import type { QuarryConfig } from '../config/quarry-config.ts';
import type { Runner } from '../engine/runner.ts';
import type { WorkflowRegistry } from '../engine/workflow.ts';
import type { DocumentIndexer, FolderPolicy } from '../service/document-folders.ts';
import type { ServiceContext } from '../service/service-context.ts';
import type { Store } from '../store/store.ts';

/**
 * How the server tells who is asking, fixed when it starts: `local` (loopback, no users at start: one
 * local user, no sign-in) or `tokens` (every request needs a valid token for the server's whole life;
 * with no users left, nobody gets in).
 */
export type AuthMode = 'local' | 'tokens';

/** What the server is built from; `serve.ts` chooses the concrete store and runner. */
export interface ServerDependencies {
  /** The whole store: only authentication and context building touch it; routes get an owner's view. */
  store: Store;
  config: QuarryConfig;
  workflows: WorkflowRegistry;
  /** The in-process runner (absent on API-only nodes: `serve --no-runner`). */
  runner?: Runner;
  /** The server's document roots (`serve --docs`): the only folders requests may name. */
  folders: FolderPolicy;
  indexer: DocumentIndexer;
  auth: AuthMode;
  /** Host names requests may address (the bound address, loopback names, configured public names). */
  allowedHosts: Set<string>;
  /** Seconds between SSE heartbeats. Default 15. */
  heartbeatSeconds?: number;
}

/** Hono's typed context: each request carries the service context of its user. */
export interface AppEnv {
  Variables: { context: ServiceContext; user: { id: string; name: string } | null };
}
