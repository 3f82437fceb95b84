import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { stopSession } from '../../service/session-control.ts';
import { deleteSession, parseDuration, renameSession, resolveSessionId } from '../../service/session-queries.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { exitCodes } from '../error-to-exit-code.ts';
import { printJson, shortId } from '../output.ts';

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
      const context = await runtime.open();
      const session = await renameSession(context, { sessionId: await resolveSessionId(context, id), title });
      if (runtime.json) printJson(session);
      else console.log(`Renamed ${shortId(session.id)}: ${session.title}`);
    });

  program
    .command('rm')
    .description('delete sessions and everything they hold (a running one is stopped first)')
    .argument('<ids...>', 'session ids or unique prefixes')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (ids: string[], options: { yes?: boolean }) => {
      const context = await runtime.open();
      const resolved = [];
      for (const id of ids) resolved.push(await resolveSessionId(context, id));
      if (!options.yes && !(await confirm(`Delete ${resolved.length} session(s): ${resolved.map(shortId).join(', ')}?`))) {
        console.error('Nothing deleted. Pass --yes to delete without asking.');
        setExitCode(exitCodes.usage);
        return;
      }
      for (const sessionId of resolved) {
        await deleteSession(context, { sessionId });
        if (runtime.json) printJson({ type: 'deleted', sessionId });
        else console.log(`Deleted ${sessionId}`);
      }
    });

  program
    .command('stop')
    .description('stop a running session (it can be resumed later)')
    .argument('<id>', 'session id or unique prefix')
    .action(async (id: string) => {
      const context = await runtime.open();
      const sessionId = await resolveSessionId(context, id);
      const result = await stopSession(context, { sessionId });
      if (runtime.json) printJson({ type: 'stop', sessionId, result });
      else console.log(result === 'not-running' ? `Session ${shortId(sessionId)} is not running.` : result === 'requested' ? `Asked the worker running ${shortId(sessionId)} to stop; it stops within seconds.` : `Stopped ${shortId(sessionId)}.`);
    });

  program
    .command('gc')
    .description('delete finished sessions (completed, failed, interrupted) not updated for a while')
    .option('--older-than <duration>', 'age, like 30d, 12h or 45m', '30d')
    .action(async (options: { olderThan: string }) => {
      const context = await runtime.open();
      const result = await context.store.deleteFinishedSessions({ olderThanMs: parseDuration(options.olderThan) });
      if (runtime.json) printJson(result);
      else console.log(`Deleted ${result.deleted} finished session(s) older than ${options.olderThan}.`);
    });
}
