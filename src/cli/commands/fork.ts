import type { Command } from 'commander';
import { invalidInput } from '../../shared/errors.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson, printLine, shortId } from '../output.ts';
import { parseWholeNumber } from '../parse-options.ts';

export function registerFork(program: Command, runtime: CliRuntime, setExitCode: (code: number) => void): void {
  program
    .command('fork')
    .description('copy a session up to a step into a new session (the original is untouched)')
    .argument('<id>', 'session id or unique prefix')
    .option('--from <step-key|phase>', 'the new session starts again at this step or phase')
    .option(
      '--turn <n>',
      'an earlier turn (1: the first report, before follow-ups): the copy ends with it, or with --from starts again inside it',
    )
    .option('--run', 'run the fork now')
    .action(async (id: string, options: { from?: string; turn?: string; run?: boolean }) => {
      const { forkSession } = await import('../../service/session-control.ts');
      const { resolveSessionId } = await import('../../service/session-queries.ts');
      const { runInForeground } = await import('../foreground.ts');
      const turn = parseWholeNumber(options.turn, '--turn', 1, 1_000_000);
      if (options.from === undefined && turn === undefined)
        throw invalidInput('--from', 'say where the fork starts: --from <step-key|phase>, --turn <n>, or both');
      const context = await runtime.openRunner();
      const fork = await forkSession(context, {
        sessionId: await resolveSessionId(context, id),
        from: options.from,
        turn,
      });
      if (runtime.json) printJson({ type: 'fork', sessionId: fork.id, from: id });
      else
        printLine(
          fork.status === 'completed'
            ? `Forked into session ${fork.id}, as it stood after turn ${turn}. Ask a follow-up: quarry ask ${shortId(fork.id)} "…"`
            : `Forked into session ${fork.id}.${options.run ? '' : ` Run it with: quarry resume ${shortId(fork.id)}`}`,
        );
      if (options.run && fork.status !== 'completed') setExitCode(await runInForeground(runtime, fork.id));
    });
}
