import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson, printLine, shortId } from '../output.ts';

export function registerAsk(program: Command, runtime: CliRuntime, setExitCode: (code: number) => void): void {
  program
    .command('ask')
    .description('ask a follow-up on a finished session, or answer its waiting outline review')
    .argument('<id>', 'session id or unique prefix')
    .argument('<text>', 'the question, or the answer ("approve", or feedback)')
    .option('--detach', 'queue it for a worker instead of running it here')
    .action(async (id: string, text: string, options: { detach?: boolean }) => {
      const { resolveSessionId } = await import('../../service/session-queries.ts');
      const { askSession } = await import('../../service/start-research.ts');
      const { runInForeground } = await import('../foreground.ts');
      const context = await runtime.openRunner();
      const sessionId = await resolveSessionId(context, id);
      // A follow-up's run remembers this command's trace (when tracing is on), as `quarry run`'s does.
      const { inSpan } = await import('../../shared/tracing.ts');
      const result = await inSpan('quarry ask', { 'quarry.cli.command': 'ask' }, () =>
        askSession(context, { sessionId, text }),
      );
      if (result.kind === 'answer' && !result.accepted) {
        if (runtime.json) printJson({ type: 'answer', sessionId, accepted: false });
        else printLine(`An answer to "${result.requestKey}" was already recorded; this one was not applied.`);
      }
      if (options.detach) {
        if (runtime.json) printJson({ type: result.kind, sessionId });
        else printLine(`Queued. Watch it with: quarry show ${shortId(sessionId)}`);
        return;
      }
      setExitCode(await runInForeground(runtime, sessionId));
    });
}
