import { join } from 'node:path';
import type { ConfigFlags, QuarryConfig } from '../config/quarry-config.ts';
import type { LocalContext } from '../service/local-context.ts';
import type { ServiceContext } from '../service/service-context.ts';
import type { Store } from '../store/store.ts';
import type { ProgressMode } from './progress.ts';

/** What a command that reads and manages sessions gets: the local user's services and the whole store. */
export type CliContext = ServiceContext & { admin: Store };
/** What a command that runs sessions gets: the same, with the workflows and this process's runner. */
export type CliRunContext = LocalContext & { admin: Store };

/**
 * What commands share: global options, the configuration (resolved once, with the command's own
 * flags), and the store and runner, opened on first use. The CLI acts for the local user on their
 * own machine: it reads any folder and indexes in the foreground.
 */
export class CliRuntime {
  json = false;
  db: string | undefined;
  /** `--as <user>`: the user whose sessions commands act on (default: the local user). */
  actAs: string | undefined;
  private readonly env: NodeJS.ProcessEnv;
  private resolved: QuarryConfig | null = null;
  private store: Store | null = null;
  private context: CliContext | null = null;
  private stopTelemetry: (() => Promise<void>) | null = null;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.env = env;
  }

  /** The configuration: the command's flags, then the environment, the config file and defaults. */
  async config(flags: ConfigFlags = {}): Promise<QuarryConfig> {
    // Loaded here, not at start: `quarry --help` never needs the configuration's schema.
    const { resolveConfig } = await import('../config/quarry-config.ts');
    this.resolved ??= resolveConfig({ env: this.env, flags: { ...flags, db: this.db ?? flags.db } });
    return this.resolved;
  }

  get progressMode(): ProgressMode {
    return this.json ? 'json' : process.stdout.isTTY ? 'tty' : 'plain';
  }

  /** The store and services, for commands that read and manage sessions (no runner). */
  async open(flags: ConfigFlags = {}): Promise<CliContext> {
    if (this.context) return this.context;
    const config = await this.config(flags);
    const store = await this.openStore(config);
    const { localQueryContext } = await import('../service/local-query-context.ts');
    this.context = { ...localQueryContext(store, config, { ownerId: await this.ownerId(store) }), admin: store };
    return this.context;
  }

  /** The same with the workflows and a runner of this process, for commands that run sessions. */
  async openRunner(flags: ConfigFlags = {}): Promise<CliRunContext> {
    if (this.context && 'runner' in this.context && this.context.runner) return this.context as CliRunContext;
    const config = await this.config(flags);
    // Traces, when the environment asks for them (OTEL_EXPORTER_OTLP_ENDPOINT): the SDK loads only then.
    if (this.env.OTEL_EXPORTER_OTLP_ENDPOINT || this.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
      const { startTelemetry } = await import('../config/telemetry.ts');
      this.stopTelemetry ??= await startTelemetry('quarry', this.env);
    }
    const store = await this.openStore(config);
    const { localServiceContext } = await import('../service/local-context.ts');
    const context = {
      ...localServiceContext(store, config, { workerId: `cli:${process.pid}`, ownerId: await this.ownerId(store) }),
      admin: store,
    };
    this.context = context;
    return context;
  }

  /** The owner commands act for: the user `--as` names, else the local user (undefined). */
  private async ownerId(store: Store): Promise<string | undefined> {
    if (this.actAs === undefined) return undefined;
    const { userNamed } = await import('../service/users.ts');
    return (await userNamed(store, this.actAs)).id;
  }

  private async openStore(config: QuarryConfig): Promise<Store> {
    const { openStore } = await import('../store/open-store.ts');
    this.store ??= await openStore({
      db: config.db,
      // Quarry's own folder is made on first use; a folder someone named must exist.
      createFolder: config.db === join(config.home, 'quarry.db'),
      retry: {
        onRetry: ({ delayMs, error }) =>
          console.error(`quarry: ${error.message} Trying again in ${Math.ceil(delayMs / 1000)} s…`),
      },
    });
    return this.store;
  }

  async close(): Promise<void> {
    await this.context?.runner?.shutdown();
    await this.store?.close();
    // Spans still batched are sent before the process ends.
    await this.stopTelemetry?.();
    this.stopTelemetry = null;
    this.store = null;
    this.context = null;
  }
}
