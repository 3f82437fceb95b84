/** The command line's program: global options, help, and each command registered by its module. */
import { Command } from 'commander';
import { QUARRY_VERSION } from '../config/version.ts';
import type { CliRuntime } from './cli-runtime.ts';
import { registerAsk } from './commands/ask.ts';
import { registerConfigSession } from './commands/config-session.ts';
import { registerFork } from './commands/fork.ts';
import { registerIndex } from './commands/index-documents.ts';
import { registerLibrary } from './commands/library.ts';
import { registerLs } from './commands/ls.ts';
import { registerManage } from './commands/manage.ts';
import { registerMcp } from './commands/mcp.ts';
import { registerMigrateStore } from './commands/migrate-store.ts';
import { registerResume } from './commands/resume.ts';
import { registerRun } from './commands/run.ts';
import { registerServe } from './commands/serve.ts';
import { registerShow } from './commands/show.ts';
import { registerTransfer } from './commands/transfer.ts';
import { registerUsers } from './commands/users.ts';
import { registerWorker } from './commands/worker.ts';

const environmentHelp = `
Environment (flags win over these; these win over $QUARRY_HOME/config.json, whose fields are listed in the README):
  QUARRY_HOME          folder for Quarry's data (default ~/.quarry)
  QUARRY_DB            the store: a SQLite file path or a postgres:// URL (default $QUARRY_HOME/quarry.db)
  QUARRY_DOCS          default document folders, separated by ":"
  QUARRY_LIBRARY       where users' libraries are kept (quarry docs add; default $QUARRY_HOME/library)
  QUARRY_SEARCH        default web search providers, comma-separated
  QUARRY_MODEL         default model, provider:model (openai, anthropic, ollama, openai-compatible)
  QUARRY_FAST_MODEL    a faster model for light steps
  QUARRY_LLM_BASE_URL, QUARRY_LLM_API_KEY   for openai-compatible models
  OPENAI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_BASE_URL
  SEARXNG_URL, TAVILY_API_KEY, BRAVE_API_KEY, EXA_API_KEY, JINA_API_KEY   web search
  QUARRY_FETCH_ALLOW   private hosts or CIDRs fetches may reach (comma-separated)
  QUARRY_PRICE_PER_MTOK   "input,output" dollars per million tokens, for the cost ledger
  QUARRY_HOST, QUARRY_PORT, QUARRY_PUBLIC_NAMES, QUARRY_PUBLIC_URL   quarry serve's address and the names it answers to
  QUARRY_SERVER_MODELS   models a server's users may choose besides QUARRY_MODEL and QUARRY_FAST_MODEL
  QUARRY_METRICS_TOKEN   the bearer token /metrics requires (else only direct scrapers on private networks)

Exit codes: 0 done, 2 usage error, 3 waiting for input, 4 not found, 5 conflict, 130 interrupted, 1 unexpected.`;

/** Every command's registration, in the order help lists them (one function may add several). */
const registrations = [
  registerRun,
  registerLs,
  registerShow,
  registerResume,
  registerAsk,
  registerFork,
  registerManage,
  registerConfigSession,
  registerTransfer,
  registerIndex,
  registerLibrary,
  registerUsers,
  registerWorker,
  registerServe,
  registerMcp,
  registerMigrateStore,
];

/** The program: the global options and every command. */
export function buildProgram(runtime: CliRuntime, setExitCode: (code: number) => void): Command {
  const program = new Command('quarry')
    .description('A deep-research agent whose sessions never lose their place.')
    .version(QUARRY_VERSION)
    .option('--db <path|postgres-url>', 'the store (overrides QUARRY_DB)')
    .option('--json', 'machine-readable output, one JSON object per line')
    .option('--as <user>', "act as this user of the store (their sessions), not the local user's")
    .addHelpText('after', environmentHelp)
    .showHelpAfterError()
    .exitOverride()
    .hook('preAction', (command) => {
      const options = command.opts<{ db?: string; json?: boolean; as?: string }>();
      runtime.db = options.db;
      runtime.json = options.json ?? false;
      runtime.actAs = options.as;
    });
  for (const register of registrations) register(program, runtime, setExitCode);
  return program;
}
