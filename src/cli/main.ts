import { Command, CommanderError } from 'commander';
import { QUARRY_VERSION } from '../config/version.ts';
import { isQuarryError } from '../store/errors.ts';
import { CliRuntime } from './cli-runtime.ts';
import { registerAsk } from './commands/ask.ts';
import { registerConfigSession } from './commands/config-session.ts';
import { registerFork } from './commands/fork.ts';
import { registerIndex } from './commands/index-documents.ts';
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
import { errorToExitCode, exitCodes } from './error-to-exit-code.ts';

const environmentHelp = `
Environment (flags win over these; these win over $QUARRY_HOME/config.json, whose fields are listed in the README):
  QUARRY_HOME          folder for Quarry's data (default ~/.quarry)
  QUARRY_DB            the store: a SQLite file path or a postgres:// URL (default $QUARRY_HOME/quarry.db)
  QUARRY_DOCS          default document folders, separated by ":"
  QUARRY_SEARCH        default web search providers, comma-separated
  QUARRY_MODEL         default model, provider:model (openai, anthropic, ollama, openai-compatible)
  QUARRY_FAST_MODEL    a faster model for light steps
  QUARRY_LLM_BASE_URL, QUARRY_LLM_API_KEY   for openai-compatible models
  OPENAI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_BASE_URL
  SEARXNG_URL, TAVILY_API_KEY, BRAVE_API_KEY, EXA_API_KEY, JINA_API_KEY   web search
  QUARRY_FETCH_ALLOW   private hosts or CIDRs fetches may reach (comma-separated)
  QUARRY_PRICE_PER_MTOK   "input,output" dollars per million tokens, for the cost ledger
  QUARRY_HOST, QUARRY_PORT, QUARRY_PUBLIC_NAMES   quarry serve's address and the names it answers to

Exit codes: 0 done, 2 usage error, 3 waiting for input, 4 not found, 5 conflict, 130 interrupted, 1 unexpected.`;

export function buildProgram(runtime: CliRuntime, setExitCode: (code: number) => void): Command {
  const program = new Command('quarry')
    .description('A deep-research agent whose sessions never lose their place.')
    .version(QUARRY_VERSION)
    .option('--db <path|postgres-url>', 'the store (overrides QUARRY_DB)')
    .option('--json', 'machine-readable output, one JSON object per line')
    .addHelpText('after', environmentHelp)
    .showHelpAfterError()
    .exitOverride()
    .hook('preAction', (command) => {
      const options = command.opts<{ db?: string; json?: boolean }>();
      runtime.db = options.db;
      runtime.json = options.json ?? false;
    });
  registerRun(program, runtime, setExitCode);
  registerLs(program, runtime);
  registerShow(program, runtime);
  registerResume(program, runtime, setExitCode);
  registerAsk(program, runtime, setExitCode);
  registerFork(program, runtime, setExitCode);
  registerManage(program, runtime, setExitCode);
  registerConfigSession(program, runtime);
  registerTransfer(program, runtime);
  registerIndex(program, runtime);
  registerUsers(program, runtime);
  registerWorker(program, runtime);
  registerServe(program, runtime);
  registerMcp(program, runtime);
  registerMigrateStore(program, runtime);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const runtime = new CliRuntime();
  let exitCode: number = exitCodes.completed;
  const program = buildProgram(runtime, (code) => (exitCode = code));
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0
        ? 0
        : exitCodes.usage;
    }
    if (isQuarryError(error)) {
      if (runtime.json)
        process.stdout.write(
          `${JSON.stringify({ type: 'error', error: { code: error.code, message: error.message } })}\n`,
        );
      console.error(`quarry: ${error.message}`);
    } else {
      console.error('quarry: unexpected error (please report it with the lines below)');
      console.error(error);
    }
    return errorToExitCode(error);
  } finally {
    await runtime.close().catch(() => undefined);
  }
}

// A reader that stops reading (`quarry ls --json | head -1`) is no error: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}
// A long-running worker or server must outlive a stray rejection (a store blip in a callback nobody
// awaited): it is logged, and work goes on. Runs retry their own store writes.
process.on('unhandledRejection', (reason) => {
  console.error(
    `quarry: an error nothing handled (continuing): ${reason instanceof Error ? reason.message : String(reason)}`,
  );
});

process.exitCode = await main(process.argv);
