import type { QuarryConfig } from '../config/quarry-config.ts';
import { WorkflowRegistry } from '../engine/workflow.ts';
import { ownerStore } from '../store/owner-store.ts';
import type { Store } from '../store/store.ts';
import { anyFolder, foregroundIndexer } from './document-folders.ts';
import { LOCAL_OWNER, type ServiceContext } from './service-context.ts';

/**
 * The service context of someone acting on their own machine who only reads and manages sessions
 * (`quarry ls`, `show`, `rename`, `rm`, `export`…): the local user, any folder, indexing in the
 * foreground, no per-user limits, and no workflows or runner. `localServiceContext` adds the engine
 * for commands that run sessions.
 */
export function localQueryContext(
  store: Store,
  config: QuarryConfig,
  options: { ownerId?: string } = {},
): ServiceContext {
  return {
    store: ownerStore(store, options.ownerId ?? LOCAL_OWNER),
    config,
    folders: anyFolder,
    indexer: foregroundIndexer(store),
    workflows: new WorkflowRegistry(),
    enforceLimits: false,
  };
}
