import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { collect } from '../parse-options.ts';

export function registerResume(program: Command, runtime: CliRuntime, setExitCode: (code: number) => void): void {
  program
    .command('resume')
    .description('continue a session at its resume point, under the same id (or rewind it in place with --from)')
    .argument('<id>', 'session id or unique prefix')
    .option('--from <phase|step-key>', 'rewind in place: redo from this phase or step')
    .option('--force', 'run a completed session again, as a new report version')
    .option('--docs <folder>', 'add a documents folder to the session (repeatable)', collect)
    .option('--search <provider>', 'add a web search provider to the session (repeatable)', collect)
    .option('--replace-sources', "use the given --docs/--search instead of the session's own")
    .action(
      async (
        id: string,
        options: { from?: string; force?: boolean; docs?: string[]; search?: string[]; replaceSources?: boolean },
      ) => {
        const { planResume } = await import('../../service/session-control.ts');
        const { resolveSessionId } = await import('../../service/session-queries.ts');
        const { runInForeground } = await import('../foreground.ts');
        const context = await runtime.openRunner();
        const sessionId = await resolveSessionId(context, id);
        const plan = await planResume(context, { sessionId, ...options });
        setExitCode(await runInForeground(runtime, sessionId, plan));
      },
    );
}
