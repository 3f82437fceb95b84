import { isRunEnd, type StoredEvent } from '../shared/events.ts';
import { StreamedText } from '../shared/streamed-text.ts';
import type { Session } from '../store/store.ts';
import { chatReply } from './chat-conversation.ts';
import { followEvents } from './follow-events.ts';
import { OutageWatch, outageMessage, outageStopReason } from './outage-watch.ts';
import type { ServiceContext } from './service-context.ts';
import { stopSession } from './session-control.ts';

/** Tokens a run's model calls used, as its journal recorded them. */
export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
}

/** How a run's answer ended, for clients that must say so in their own protocol. */
export type AnswerEnd =
  | { outcome: 'answered'; text: string }
  | { outcome: 'failed'; code: string; message: string }
  | { outcome: 'stopped'; message: string }
  /** The text that streamed is not how the finished answer (`text`) begins: a step started over and wrote otherwise. */
  | { outcome: 'diverged'; message: string; text: string };

export type AnswerPart =
  | { type: 'progress'; event: StoredEvent }
  /** Answer text, and when the event that carried it was committed. */
  | { type: 'text'; text: string; createdAt: number }
  | { type: 'end'; end: AnswerEnd; usage: RunUsage };

/** The run's token usage from its journal's model steps. */
export async function runUsage(context: ServiceContext, session: Session, runId: string | null): Promise<RunUsage> {
  if (!runId) return { inputTokens: 0, outputTokens: 0 };
  // Superseded steps too (a rewind): their tokens were spent, as the Responses API counts them.
  const steps = await context.store.listSteps(session.id, { runId, includeSuperseded: true });
  return steps.reduce(
    (sum, step) => ({
      inputTokens: sum.inputTokens + (step.usage?.inputTokens ?? 0),
      outputTokens: sum.outputTokens + (step.usage?.outputTokens ?? 0),
    }),
    { inputTokens: 0, outputTokens: 0 },
  );
}

/**
 * A run's answer as it is written, for clients that can only append (a chat completion, a Responses
 * stream): progress events, then text as the writing steps stream it — each piece only once it
 * extends what was sent — then how it ended, with what the finished answer adds (its checks, its
 * sources) and the run's usage, from `after` on (`runBeginning` for a client joining a running run).
 * If a step starts over with text that differs from what was sent, no more text is sent and
 * the end says so: such a client asks again for the finished answer (`after` null: no run to follow).
 */
export async function* followAnswer(
  context: ServiceContext,
  session: Session,
  after: number | null,
  signal?: AbortSignal,
): AsyncGenerator<AnswerPart> {
  if (after === null) {
    const current = await context.store.getSession(session.id);
    yield {
      type: 'end',
      end: await ending(context, current, null),
      usage: await runUsage(context, current, current.currentRunId),
    };
    return;
  }
  const streamed = new StreamedText();
  let sent = '';
  let diverged = false;
  // A client waits on an outage (an unreachable model) for a bounded time, then the run is stopped
  // (resumable, nothing lost) and the client told why: never a silent wait until some timeout.
  const watch = new OutageWatch(context.config.server.outageWaitSeconds * 1000);
  for await (const event of eventsWithin(context, session.id, { after, signal, watch })) {
    if (event === 'overdue') {
      const overdue = watch.current()!;
      await stopSession(context, { sessionId: session.id, reason: outageStopReason(overdue.cause) });
      const current = await context.store.getSession(session.id);
      yield {
        type: 'end',
        end: { outcome: 'failed', code: 'STEP_FAILED', message: outageMessage(overdue) },
        usage: await runUsage(context, current, current.currentRunId),
      };
      return;
    }
    watch.see(event);
    if (event.type === 'report-delta') {
      // Only text the run posts as its message is the answer (a report it keeps for itself is not).
      if (!event.data.message) continue;
      streamed.apply(event.data);
      const text = streamed.text;
      if (diverged || sent.startsWith(text)) continue;
      if (!text.startsWith(sent)) {
        diverged = true;
        continue;
      }
      yield { type: 'text', text: text.slice(sent.length), createdAt: event.createdAt };
      sent = text;
      continue;
    }
    if (!isRunEnd(event)) {
      yield { type: 'progress', event };
      continue;
    }
    const current = await context.store.getSession(session.id);
    const end = await ending(context, current, event);
    const usage = await runUsage(context, current, current.currentRunId);
    if (end.outcome === 'answered' && !end.text.startsWith(sent)) diverged = true;
    if (diverged && end.outcome === 'answered') {
      yield {
        type: 'end',
        end: {
          outcome: 'diverged',
          message:
            'A writing step started over after a crash and wrote differently; ask again (the same conversation) for the finished answer.',
          text: end.text,
        },
        usage,
      };
      return;
    }
    if (end.outcome === 'answered' && end.text.length > sent.length)
      yield { type: 'text', text: end.text.slice(sent.length), createdAt: event.createdAt };
    yield { type: 'end', end, usage };
    return;
  }
}

/**
 * A session's events, and `overdue` once an outage the watch sees has lasted past its bound (even
 * when no event comes in the meantime), once; the events then go on. Ends when the signal aborts.
 */
export async function* eventsWithin(
  context: ServiceContext,
  sessionId: string,
  options: { after: number; signal?: AbortSignal; watch: OutageWatch },
): AsyncGenerator<StoredEvent | 'overdue'> {
  const inner = new AbortController();
  const abort = () => inner.abort();
  if (options.signal?.aborted) return;
  options.signal?.addEventListener('abort', abort, { once: true });
  const events = followEvents(context.store, sessionId, { after: options.after, signal: inner.signal })[
    Symbol.asyncIterator
  ]();
  // Once told, the caller decides what to do (stop the run) and the events go on to the run's end.
  let told = false;
  try {
    for (;;) {
      const remaining = told ? null : options.watch.remainingMs();
      let timer: NodeJS.Timeout | undefined;
      const next =
        remaining === null
          ? await events.next()
          : await Promise.race([
              events.next(),
              new Promise<'overdue'>((resolve) => {
                timer = setTimeout(() => resolve('overdue'), remaining);
              }),
            ]);
      clearTimeout(timer);
      if (next === 'overdue') {
        told = true;
        yield 'overdue';
        continue;
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    options.signal?.removeEventListener('abort', abort);
    inner.abort();
    await events.return?.(undefined).catch(() => undefined);
  }
}

/** How the run ended, in the client's terms; `ended` null: as the session stands now. */
async function ending(context: ServiceContext, session: Session, ended: StoredEvent | null): Promise<AnswerEnd> {
  if (ended?.type === 'run-error' || (!ended && session.status === 'failed')) {
    const error =
      ended?.type === 'run-error' ? ended.data : (session.error ?? { code: 'INTERNAL', message: 'unknown' });
    return {
      outcome: 'failed',
      code: error.code,
      message: `The research failed: ${error.message}. Send "continue" to retry it.`,
    };
  }
  if (session.status === 'interrupted')
    return { outcome: 'stopped', message: 'The research was stopped. Send "continue" to resume it where it stopped.' };
  return { outcome: 'answered', text: await chatReply(context, session, ended) };
}
