import type { Log } from '../config/log.ts';
import type { QuarryConfig } from '../config/quarry-config.ts';
import type { Runner } from '../engine/runner.ts';
import type { WorkflowRegistry } from '../engine/workflow.ts';
import type { DocumentIndexer, FolderPolicy } from '../service/document-folders.ts';
import type { PdfPrinter } from '../service/print-pdf.ts';
import type { ServiceContext } from '../service/service-context.ts';
import type { Store } from '../store/store.ts';
import type { AuthThrottle } from './client-limits.ts';

/**
 * How a request is authenticated, decided per request (`auth.ts`): `local` (the one local user, no
 * sign-in: a loopback-only server while the store has no users) or `tokens` (a valid token).
 */
export type AuthMode = 'local' | 'tokens';

/**
 * Who can reach the server, fixed when it starts: `loopback` (bound to a loopback address, no
 * public name or URL) or `public` (anything else, including loopback behind a reverse proxy).
 */
export type Exposure = 'loopback' | 'public';

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
  exposure: Exposure;
  /** Whether cookies are `Secure` (the operator's public URL is https). */
  secureCookies: boolean;
  /** Host names requests may address (the bound address, loopback names, configured public names). */
  allowedHosts: Set<string>;
  /** Seconds between SSE heartbeats. Default 15. */
  heartbeatSeconds?: number;
  /** Counts failed authentications per client address (one per server). */
  authThrottle: AuthThrottle;
  /** The one PDF printer of the server (a reused browser, bounded); absent: each export prints once. */
  printer?: PdfPrinter;
  /** Where the server's own lines go (a failed request's error): the process log, JSON when it is. Default: standard error. */
  log?: Log;
}

/** Hono's typed context: each request carries the service context of its user. */
export interface AppEnv {
  Variables: { context: ServiceContext; user: { id: string; name: string } | null; auth: AuthMode };
}
