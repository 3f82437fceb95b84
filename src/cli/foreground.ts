import type { ActivationResult, RunSessionOptions } from '../engine/runner.ts';
import { clarifyingQuestionsOf, clarifyingText } from '../research/clarify.ts';
import { stepKeys } from '../research/step-keys.ts';
import { runOutput } from '../research/step-outputs.ts';
import { outlineOf, outlineText } from '../service/outline-question.ts';
import { pendingInput } from '../service/session-control.ts';
import { DELETING_REASON } from '../service/session-queries.ts';
import { raceAbort } from '../shared/concurrency.ts';
import { isQuarryError } from '../shared/errors.ts';
import type { CliRuntime } from './cli-runtime.ts';
import { exitCodes } from './error-to-exit-code.ts';
import { printJson, printLine, shortId, whenOutputCloses } from './output.ts';
import { Progress } from './progress.ts';

/**
 * How long the reads made once a run is over (what to print about it) wait for the store, in all.
 * Past it, the command says what it knows and exits rather than hang on a store that stopped answering.
 */
const CLEANUP_READ_MS = 5_000;

/**
 * Runs a session in this process with live progress until it completes, waits, fails or is
 * interrupted. Ctrl-C (or SIGTERM) stops it cleanly and prints the command that resumes it; a
 * second Ctrl-C exits at once (the journal is consistent either way). Returns the exit code.
 */
export async function runInForeground(
  runtime: CliRuntime,
  sessionId: string,
  options: RunSessionOptions = {},
): Promise<number> {
  const context = await runtime.openRunner();
  const session = await context.store.getSession(sessionId);
  const short = shortId(sessionId);
  const progress = new Progress(
    context.store,
    sessionId,
    runtime.progressMode,
    undefined,
    runtime.json ? 0 : session.lastEventOffset,
  );
  if (runtime.json) printJson({ type: 'session', sessionId, title: session.title });
  else printLine(`Session ${short}: ${session.title}`);
  progress.start();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts += 1;
    if (interrupts > 1) process.exit(exitCodes.interrupted);
    if (!runtime.json)
      process.stderr.write(
        `\n${signal === 'SIGINT' ? 'Ctrl-C' : signal}: stopping cleanly (press Ctrl-C again to quit at once)…\n`,
      );
    context.runner.stopSession(sessionId, signal === 'SIGINT' ? 'interrupted from the keyboard' : `received ${signal}`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Nobody reads the progress or the report any more: stop at the next step, resumable, and say so
  // (exit 130), rather than end at once as if it had finished.
  const forgetOutput = whenOutputCloses(() => {
    process.stderr.write(`quarry: the output was closed; stopping session ${short} cleanly…\n`);
    context.runner.stopSession(sessionId, 'its output was closed');
  });
  let result: ActivationResult;
  // Set once the run is over: what is read from the store after that is not waited for past it.
  let deadline: AbortSignal;
  try {
    result = await context.runner.runSession(sessionId, options);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    forgetOutput();
    deadline = AbortSignal.timeout(CLEANUP_READ_MS);
    await progress.stop(deadline);
  }
  if (
    result.reason === DELETING_REASON ||
    (result.status !== 'completed' && (await deleted(context.store, sessionId, deadline)))
  ) {
    // Removed while it ran (`quarry rm --force` elsewhere): there is nothing left to resume.
    if (runtime.json) printJson({ type: 'result', sessionId, status: 'deleted' });
    else console.error(`\nSession ${short} was deleted while it ran; nothing is left of it.`);
    return exitCodes.notFound;
  }
  // A lost lease: another worker holds it now, or nobody does (the store was away longer than the
  // lease lasted, so it lapsed without anyone taking it). The message says which.
  const holder =
    result.status === 'lease-lost'
      ? await raceAbort(
          context.store.getSession(sessionId).then(
            // `running` as listings say it: a lease that has not lapsed (the database clock decides).
            (session) => (session.status === 'running' ? (session.lease?.workerId ?? null) : null),
          ),
          deadline,
        ).catch(() => null)
      : null;
  // A wait shows what it waits on: the clarifying questions, or the outline to review.
  const pending =
    result.status === 'waiting'
      ? (
          await raceAbort(
            context.store.getSession(sessionId).then((waiting) => pendingInput(context, waiting)),
            deadline,
          ).catch(() => null)
        )?.input
      : null;
  return report(runtime, sessionId, result, progress.printedReport, holder, pending);
}

async function deleted(
  store: { getSession(id: string): Promise<unknown> },
  sessionId: string,
  deadline: AbortSignal,
): Promise<boolean> {
  return raceAbort(store.getSession(sessionId), deadline).then(
    () => false,
    (error: unknown) => isQuarryError(error, 'SESSION_NOT_FOUND'),
  );
}

/** The outcome; `printed` is what of the report was already shown as it was written. */
function report(
  runtime: CliRuntime,
  sessionId: string,
  result: ActivationResult,
  printed: string,
  holder: string | null = null,
  pending: unknown = null,
): number {
  const asked = clarifyingQuestionsOf(pending);
  const outline = outlineOf(pending);
  const short = shortId(sessionId);
  const output = runOutput(result);
  if (runtime.json)
    printJson({
      type: 'result',
      sessionId,
      status: result.status,
      error: result.error ?? null,
      report: output?.report ?? null,
      answer: output?.answer ?? null,
      waitingFor: result.waitingFor ?? null,
      ...(asked ? { questions: asked } : {}),
      ...(outline ? { outline } : {}),
    });
  switch (result.status) {
    case 'completed':
      if (!runtime.json) {
        // What the conversation shows: a follow-up's answer, or the report.
        const text = output?.answer ?? output?.report ?? '';
        // The report went out as it was written: what only the finished report says follows it.
        printLine(printed && text.startsWith(printed) ? text.slice(printed.length) : `\n${text}`);
        printLine(`Session ${sessionId} completed. Ask a follow-up: quarry ask ${short} "…"`);
      }
      return exitCodes.completed;
    case 'waiting':
      if (!runtime.json && result.waitingFor === stepKeys.clarifyAnswer)
        printLine(
          // The questions, unless the store did not answer in time (then `quarry show` has them).
          `\n${asked ? clarifyingText(asked) : `Session ${short} waits for answers to its clarifying questions (quarry show ${short}).`}\nAnswer: quarry ask ${short} "<your answers>" — or research it as asked: quarry ask ${short} skip`,
        );
      else if (!runtime.json)
        printLine(
          `\n${outline ? `The outline of "${outline.title}":\n\n${outlineText(outline)}\n\n` : ''}Session ${short} waits for your review of the outline (${result.waitingFor}). Approve it: quarry ask ${short} approve — or send feedback: quarry ask ${short} "<what to change>"`,
        );
      return exitCodes.waiting;
    case 'interrupted':
      if (!runtime.json) printLine(`\nStopped. Nothing completed is lost. Resume with: quarry resume ${short}`);
      return exitCodes.interrupted;
    case 'unrecorded':
      if (!runtime.json)
        console.error(
          `\nSession ${short} stopped, and the store could not record it: ${result.error?.message ?? 'unknown error'}\nEverything recorded before is kept. Once the store works again, continue with: quarry resume ${short}`,
        );
      return exitCodes.unexpected;
    case 'lease-lost':
      if (!runtime.json)
        printLine(
          holder
            ? `\nAnother worker (${holder}) took over session ${short}; it continues there. Watch it with: quarry show ${short}`
            : `\nSession ${short} stopped: its lease lapsed while the store could not be reached, and no other worker has taken it. Nothing completed is lost. Resume it with: quarry resume ${short}`,
        );
      return exitCodes.conflict;
    default:
      if (!runtime.json)
        console.error(
          `\nSession ${short} failed: ${result.error?.message ?? 'unknown error'}\nFix the cause, then resume it (the failed step is retried): quarry resume ${short}`,
        );
      return exitCodes.unexpected;
  }
}
