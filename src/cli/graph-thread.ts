import type { Session } from '../store/store.ts';
import type { CliRuntime } from './cli-runtime.ts';
import { printJson, printLine } from './output.ts';

/** Checkpoints `quarry show` lists of a thread's history, newest first. */
const HISTORY = 20;
/** Characters of each channel's value shown. */
const PREVIEW = 300;

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text;
}

/**
 * A LangGraph thread as `quarry show` gives it: where it stands (the nodes next, an interrupt
 * waiting for its answer), its latest state channel by channel, and its checkpoint history, read
 * through `quarry/langgraph`'s saver (which needs the app's `@langchain/langgraph-checkpoint`).
 */
export async function showGraphThread(runtime: CliRuntime, session: Session): Promise<void> {
  const threadId = (session.externalId ?? '').replace(/^langgraph:/, '');
  let saverModule: typeof import('../langgraph/quarry-saver.ts');
  try {
    saverModule = await import('../langgraph/quarry-saver.ts');
  } catch {
    printLine(
      `\nLangGraph thread ${threadId}: its checkpoints are read with @langchain/langgraph-checkpoint, which is not installed here (npm install @langchain/langgraph-checkpoint).`,
    );
    return;
  }
  const { nextNodes } = await import('../langgraph/thread-status.ts');
  const saver = await saverModule.QuarrySaver.open((await runtime.config()).db);
  try {
    const history = [];
    for await (const tuple of saver.list({ configurable: { thread_id: threadId } }, { limit: HISTORY }))
      history.push(tuple);
    const latest = history[0];
    const next = latest ? nextNodes(latest.checkpoint) : [];
    const interrupts = (latest?.pendingWrites ?? [])
      .filter(([, channel]) => channel === '__interrupt__')
      .map(([, , value]) => value);
    const checkpoints = history.map(({ checkpoint, metadata, pendingWrites }) => ({
      id: checkpoint.id,
      createdAt: checkpoint.ts,
      step: metadata?.step ?? null,
      source: metadata?.source ?? null,
      writes: [...new Set((pendingWrites ?? []).map(([, channel]) => channel))],
    }));
    if (runtime.json) {
      printJson({
        type: 'langgraph-thread',
        threadId,
        status: session.status,
        next,
        interrupts,
        values: latest?.checkpoint.channel_values ?? {},
        checkpoints,
      });
      return;
    }
    printLine(`\nLangGraph thread ${threadId} (run by its graph: invoke it with this thread_id to continue)`);
    if (!latest) {
      printLine('  no checkpoints yet');
      return;
    }
    printLine(`  next: ${next.length ? next.join(', ') : 'nothing (the graph reached its end)'}`);
    for (const value of interrupts) printLine(`  waiting at an interrupt: ${preview(value)}`);
    printLine('\nLatest state:');
    for (const [channel, value] of Object.entries(latest.checkpoint.channel_values ?? {}))
      if (!channel.startsWith('branch:to:') && !channel.startsWith('__')) printLine(`  ${channel}: ${preview(value)}`);
    printLine(`\nCheckpoints (newest first${history.length === HISTORY ? `, the last ${HISTORY}` : ''}):`);
    for (const checkpoint of checkpoints)
      printLine(
        `  ${checkpoint.id} · step ${checkpoint.step ?? '?'} · ${checkpoint.source ?? '?'} · ${checkpoint.createdAt}${checkpoint.writes.length ? ` · writes ${checkpoint.writes.join(', ')}` : ''}`,
      );
  } finally {
    await saver.close();
  }
}
