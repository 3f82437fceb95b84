import type { Command } from 'commander';
import { invalidInput } from '../../shared/errors.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { printJson, printLine, shortId } from '../output.ts';

/** `key=value`: the value as JSON when it reads as JSON (numbers, true, lists), else as text; `key=` unsets it. */
export function parseAssignment(text: string): [string, unknown] {
  const equals = text.indexOf('=');
  if (equals <= 0) throw invalidInput('setting', `"${text}" is not key=value`);
  const key = text.slice(0, equals).trim();
  const raw = text.slice(equals + 1);
  if (raw === '') return [key, null];
  try {
    return [key, JSON.parse(raw)];
  } catch {
    return [key, raw];
  }
}

export function registerConfigSession(program: Command, runtime: CliRuntime): void {
  program
    .command('config')
    .description(
      "show or change a session's settings (model, systemInstruction, maxIterations…); used on the next resume",
    )
    .argument('<id>', 'session id or unique prefix')
    .argument('[settings...]', 'key=value pairs; key= goes back to the default')
    .action(async (id: string, assignments: string[]) => {
      const { resolveSessionId } = await import('../../service/session-queries.ts');
      const { updateSession } = await import('../../service/session-settings.ts');
      const context = await runtime.open();
      const sessionId = await resolveSessionId(context, id);
      const settings = Object.fromEntries(assignments.map(parseAssignment));
      const session =
        assignments.length > 0
          ? await updateSession(context, { sessionId, settings })
          : await context.store.getSession(sessionId);
      if (runtime.json) printJson({ sessionId, settings: session.settings });
      else {
        if (assignments.length > 0) printLine(`Updated ${shortId(sessionId)}; the next resume or follow-up uses:`);
        for (const [key, value] of Object.entries(session.settings)) printLine(`  ${key} = ${JSON.stringify(value)}`);
      }
    });
}
