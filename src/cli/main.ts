import { CommanderError } from 'commander';
import { isQuarryError } from '../shared/errors.ts';
import { CliRuntime } from './cli-runtime.ts';
import { errorToExitCode, exitCodes } from './error-to-exit-code.ts';
import { outputWasClosed } from './output.ts';
import { buildProgram } from './program.ts';

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

/**
 * Runs the command line for `argv` (as `process.argv`: node, the script, then the words) and sets the
 * process's exit code when the command ends. bin/quarry calls it, on the compiled CLI or the sources.
 */
export function runCli(argv: string[]): Promise<void> {
  // A reader that stops reading (`quarry ls --json | head -1`) is no error: a command that only
  // prints stops quietly; a research run stops cleanly and ends as interrupted (see foreground.ts).
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (!outputWasClosed()) process.exit(process.exitCode ?? 0);
  });
  process.stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  // A long-running worker or server must outlive a stray rejection (a store blip in a callback nobody
  // awaited): it is logged, and work goes on. Runs retry their own store writes.
  process.on('unhandledRejection', (reason) => {
    console.error(
      `quarry: an error nothing handled (continuing): ${reason instanceof Error ? reason.message : String(reason)}`,
    );
  });
  return main(argv).then((code) => {
    process.exitCode = code;
  });
}
