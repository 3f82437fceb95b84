import type { Command } from 'commander';
import { invalidInput } from '../../shared/errors.ts';
import { type SessionStatus, sessionStatuses } from '../../store/store-entities.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { formatTable, printJson, printLine, progressText, relativeTime, shortId } from '../output.ts';

function parseStatuses(value: string | undefined): SessionStatus[] | undefined {
  if (!value) return undefined;
  const statuses = value.split(',').map((status) => status.trim());
  for (const status of statuses) {
    if (!(sessionStatuses as readonly string[]).includes(status)) {
      throw invalidInput('--status', `"${status}" is not one of ${sessionStatuses.join(', ')}`);
    }
  }
  return statuses as SessionStatus[];
}

function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw invalidInput('--limit', 'must be a whole number from 1 to 500');
  return limit;
}

export function registerLs(program: Command, runtime: CliRuntime): void {
  program
    .command('ls')
    .description('list sessions, newest first')
    .option('--status <statuses>', `only these statuses, comma-separated (${sessionStatuses.join(', ')})`)
    .option('--search <text>', 'only sessions whose title, question, report or answers contain the text')
    .option('--limit <n>', 'how many to show (1-500)', '50')
    .action(async (options: { status?: string; search?: string; limit?: string }) => {
      const { listSessions } = await import('../../service/list-sessions.ts');
      const context = await runtime.open();
      const page = await listSessions(context, {
        status: parseStatuses(options.status),
        search: options.search,
        limit: parseLimit(options.limit),
      });
      if (runtime.json) {
        for (const session of page.sessions) printJson(session);
        return;
      }
      if (page.sessions.length === 0) {
        const filtered = options.status || options.search;
        printLine(filtered ? 'No sessions match.' : `No sessions yet in ${context.store.info().location}.`);
        return;
      }
      const rows = page.sessions.map((session) => [
        shortId(session.id),
        session.title,
        session.status,
        progressText(session),
        relativeTime(session.updatedAt),
      ]);
      printLine(formatTable(['ID', 'TITLE', 'STATUS', 'PROGRESS', 'UPDATED'], rows, [8, 60]));
      if (page.nextCursor) printLine(`… more; raise --limit to see them.`);
    });
}
