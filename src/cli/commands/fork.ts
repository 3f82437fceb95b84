import type { Command } from 'commander';
import { forkSession } from '../../service/session-control.ts';
import { resolveSessionId } from '../../service/session-queries.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { runInForeground } from '../foreground.ts';
import { printJson, printLine, shortId } from '../output.ts';

export function registerFork(program: Command, runtime: CliRuntime, setExitCode: (code: number) => void): void {
  program
    .command('fork')
    .description('copy a session up to a step into a new session (the original is untouched)')
    .argument('<id>', 'session id or unique prefix')
    .requiredOption('--from <step-key|phase>', 'the new session starts again at this step or phase')
    .option('--run', 'run the fork now')
    .action(async (id: string, options: { from: string; run?: boolean }) => {
      const context = await runtime.openRunner();
      const fork = await forkSession(context, { sessionId: await resolveSessionId(context, id), from: options.from });
      if (runtime.json) printJson({ type: 'fork', sessionId: fork.id, from: id });
      else
        printLine(
          `Forked into session ${fork.id}.${options.run ? '' : ` Run it with: quarry resume ${shortId(fork.id)}`}`,
        );
      if (options.run) setExitCode(await runInForeground(runtime, fork.id));
    });
}
