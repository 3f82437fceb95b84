import type { QuarryConfig } from '../config/quarry-config.ts';
import type { Runner } from '../engine/runner.ts';
import type { WorkflowRegistry } from '../engine/workflow.ts';
import type { OwnerStore } from '../store/owner-store.ts';
import type { DocumentIndexer, FolderPolicy } from './document-folders.ts';
import type { PdfPrinter } from './print-pdf.ts';

/**
 * What every service operation receives: the acting user's view of the store, the resolved
 * configuration, which folders they may read, and the engine. Routes and CLI commands build one and
 * call services with it; they never hold the whole store.
 */
export interface ServiceContext {
  /** The acting user's sessions; every read and write is scoped to them. */
  store: OwnerStore;
  config: QuarryConfig;
  folders: FolderPolicy;
  indexer: DocumentIndexer;
  workflows: WorkflowRegistry;
  /** The runner of this process, when it executes sessions (foreground CLI, server, worker). */
  runner?: Runner;
  /** True on servers: per-user limits (question size, active runs, sessions) apply. */
  enforceLimits: boolean;
  /** The process's PDF printer (a server keeps one browser for every export); absent: print once and close. */
  printer?: PdfPrinter;
}

/** The one user of a Quarry without users (the CLI, and a loopback server before any user exists). */
export const LOCAL_OWNER = 'local';
