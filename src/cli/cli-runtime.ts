import { type ConfigFlags, type QuarryConfig, resolveConfig } from '../config/quarry-config.ts';
import { type LocalContext, localServiceContext } from '../service/local-context.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import type { ProgressMode } from './progress.ts';

export type CliContext = LocalContext & { admin: Store };

/**
 * What commands share: global options, the configuration (resolved once, with the command's own
 * flags), and the store and runner, opened on first use. The CLI acts for the local user on their
 * own machine: it reads any folder and indexes in the foreground.
 */
export class CliRuntime {
  json = false;
  db: string | undefined;
  private readonly env: NodeJS.ProcessEnv;
  private resolved: QuarryConfig | null = null;
  private store: Store | null = null;
  private context: CliContext | null = null;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.env = env;
  }

  /** The configuration: the command's flags, then the environment, the config file and defaults. */
  config(flags: ConfigFlags = {}): QuarryConfig {
    this.resolved ??= resolveConfig({ env: this.env, flags: { ...flags, db: this.db ?? flags.db } });
    return this.resolved;
  }

  get progressMode(): ProgressMode {
    return this.json ? 'json' : process.stdout.isTTY ? 'tty' : 'plain';
  }

  async open(flags: ConfigFlags = {}): Promise<CliContext> {
    if (this.context) return this.context;
    const config = this.config(flags);
    this.store ??= await openStore({
      db: config.db,
      retry: {
        onRetry: ({ delayMs, error }) =>
          console.error(`quarry: ${error.message} Trying again in ${Math.ceil(delayMs / 1000)} s…`),
      },
    });
    this.context = {
      ...localServiceContext(this.store, config, { workerId: `cli:${process.pid}` }),
      admin: this.store,
    };
    return this.context;
  }

  async close(): Promise<void> {
    await this.context?.runner.shutdown();
    await this.store?.close();
    this.store = null;
    this.context = null;
  }
}
