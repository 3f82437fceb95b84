import { Runner } from '../engine/runner.ts';
import type { WorkflowRegistry } from '../engine/workflow.ts';
import { createWorkflowRegistry } from '../service/research-runtime.ts';
import { LOCAL_OWNER, type ServiceContext } from '../service/service-context.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { loadCliDefaults, type CliDefaults } from './cli-config.ts';
import type { ProgressMode } from './progress.ts';

/** What commands share: global options, defaults, and the store and runner, opened on first use. */
export class CliRuntime {
  json = false;
  db: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  private store: Store | null = null;
  private workflows: WorkflowRegistry | null = null;
  private runner: Runner | null = null;
  private cachedDefaults: CliDefaults | null = null;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.env = env;
  }

  get defaults(): CliDefaults {
    this.cachedDefaults ??= loadCliDefaults(this.env);
    return this.cachedDefaults;
  }

  get progressMode(): ProgressMode {
    return this.json ? 'json' : process.stdout.isTTY ? 'tty' : 'plain';
  }

  async open(): Promise<ServiceContext & { env: NodeJS.ProcessEnv; runner: Runner; workflows: WorkflowRegistry }> {
    this.store ??= await openStore({ db: this.db ?? this.defaults.db, env: this.env });
    this.workflows ??= createWorkflowRegistry(this.store, this.env);
    this.runner ??= new Runner({ store: this.store, workflows: this.workflows, workerId: `cli:${process.pid}` });
    return { store: this.store, ownerId: LOCAL_OWNER, env: this.env, runner: this.runner, workflows: this.workflows };
  }

  async close(): Promise<void> {
    await this.runner?.shutdown();
    await this.store?.close();
    this.store = null;
  }
}
