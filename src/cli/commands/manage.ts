import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { exitCodes } from '../error-to-exit-code.ts';
import { printJson, printLine, shortId } from '../output.ts';

async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const readline = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await readline.question(`${question} [y/N] `)).trim());
  } finally {
    readline.close();
  }
}

/** rename, rm, stop, gc: the small commands that change a session's metadata or remove it. */
export function registerManage(program: Command, runtime: CliRuntime, setExitCode: (code: number) => void): void {
  program
    .command('rename')
    .description('give a session a new title')
    .argument('<id>', 'session id or unique prefix')
    .argument('<title>', 'the new title')
    .action(async (id: string, title: string) => {
      const { renameSession, resolveSessionId } = await import('../../service/session-queries.ts');
      const context = await runtime.open();
      const session = await renameSession(context, { sessionId: await resolveSessionId(context, id), title });
      if (runtime.json) printJson(session);
      else printLine(`Renamed ${shortId(session.id)}: ${session.title}`);
    });

  program
    .command('rm')
    .description('delete sessions and everything they hold (a running one only with --force, which stops it first)')
    .argument('<ids...>', 'session ids or unique prefixes')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--force', 'delete running sessions too, stopping them first')
    .action(async (ids: string[], options: { yes?: boolean; force?: boolean }) => {
      const { deleteSession, resolveSessionId } = await import('../../service/session-queries.ts');
      const context = await runtime.open();
      const resolved = [];
      for (const id of ids) resolved.push(await resolveSessionId(context, id));
      if (
        !options.yes &&
        !(await confirm(`Delete ${resolved.length} session(s): ${resolved.map(shortId).join(', ')}?`))
      ) {
        console.error('Nothing deleted. Pass --yes to delete without asking.');
        setExitCode(exitCodes.usage);
        return;
      }
      for (const sessionId of resolved) {
        await deleteSession(context, { sessionId, force: options.force });
        if (runtime.json) printJson({ type: 'deleted', sessionId });
        else printLine(`Deleted ${sessionId}`);
      }
    });

  program
    .command('stop')
    .description('stop a running session (it can be resumed later)')
    .argument('<id>', 'session id or unique prefix')
    .action(async (id: string) => {
      const { stopSession } = await import('../../service/session-control.ts');
      const { resolveSessionId } = await import('../../service/session-queries.ts');
      const context = await runtime.open();
      const sessionId = await resolveSessionId(context, id);
      const result = await stopSession(context, { sessionId });
      if (runtime.json) printJson({ type: 'stop', sessionId, result });
      else
        printLine(
          result === 'not-running'
            ? `Session ${shortId(sessionId)} is not running.`
            : result === 'requested'
              ? `Asked the worker running ${shortId(sessionId)} to stop; it stops within seconds.`
              : `Stopped ${shortId(sessionId)}.`,
        );
    });

  program
    .command('gc')
    .description(
      'delete finished sessions (completed and failed; interrupted ones only when asked) not updated for a while',
    )
    .option('--older-than <duration>', 'age, like 30d, 12h or 45m', '30d')
    .option('--include-interrupted', 'also delete interrupted sessions (they could still be resumed)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (options: { olderThan: string; includeInterrupted?: boolean; yes?: boolean }) => {
      const { collectGarbage } = await import('../../service/session-queries.ts');
      const context = await runtime.open();
      const request = { olderThan: options.olderThan, includeInterrupted: options.includeInterrupted };
      const { deleted: matching } = await collectGarbage(context, { ...request, dryRun: true });
      const kinds = options.includeInterrupted ? 'completed, failed or interrupted' : 'completed or failed';
      if (matching === 0) {
        if (runtime.json) printJson({ deleted: 0 });
        else printLine(`No ${kinds} sessions older than ${options.olderThan}.`);
        return;
      }
      if (!options.yes && !(await confirm(`Delete ${matching} ${kinds} session(s) older than ${options.olderThan}?`))) {
        console.error('Nothing deleted. Pass --yes to delete without asking.');
        setExitCode(exitCodes.usage);
        return;
      }
      const result = await collectGarbage(context, request);
      if (runtime.json) printJson(result);
      else printLine(`Deleted ${result.deleted} ${kinds} session(s) older than ${options.olderThan}.`);
    });
}
