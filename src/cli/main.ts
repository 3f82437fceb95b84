import { Command, CommanderError } from 'commander';
import { isQuarryError } from '../store/errors.ts';
import { CliRuntime } from './cli-runtime.ts';
import { registerLs } from './commands/ls.ts';
import { errorToExitCode, exitCodes } from './error-to-exit-code.ts';

const environmentHelp = `
Environment:
  QUARRY_HOME   folder for Quarry's data (default ~/.quarry)
  QUARRY_DB     the store: a SQLite file path or a postgres:// URL (default $QUARRY_HOME/quarry.db)`;

export function buildProgram(runtime: CliRuntime): Command {
  const program = new Command('quarry')
    .description('A deep-research agent whose sessions never lose their place.')
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
  registerLs(program, runtime);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const runtime = new CliRuntime();
  const program = buildProgram(runtime);
  try {
    await program.parseAsync(argv);
    return exitCodes.completed;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0 ? 0 : exitCodes.usage;
    }
    if (isQuarryError(error)) {
      if (runtime.json) process.stdout.write(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
      console.error(`quarry: ${error.message}`);
    } else {
      console.error('quarry: unexpected error');
      console.error(error);
    }
    return errorToExitCode(error);
  } finally {
    await runtime.close();
  }
}

process.exitCode = await main(process.argv);
