import type { Command } from 'commander';
import type { Ledger } from '../../research/ledger.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { formatTable, printJson, printLine, progressText, relativeTime, shortId } from '../output.ts';

function formatDuration(step: { startedAt: number; endedAt: number | null }): string {
  return step.endedAt === null ? '…' : `${step.endedAt - step.startedAt} ms`;
}

/** The session's ledger in one line, as the web UI shows it. */
function ledgerText(ledger: Ledger): string {
  const tokens = ledger.inputTokens + ledger.outputTokens;
  const cost = ledger.costUsd > 0 ? ` · $${ledger.costUsd.toFixed(4)}` : '';
  return `${ledger.searches} searches · ${ledger.sourcesRead} sources read · ${tokens.toLocaleString('en-US')} tokens${cost}`;
}

export function registerShow(program: Command, runtime: CliRuntime): void {
  program
    .command('show')
    .description('show a session: metadata, settings, resume point, conversation, report')
    .argument('<id>', 'session id or unique prefix')
    .option('--steps', 'the journal by phase: timings, tokens, attempts')
    .option('--prompts', 'every LLM prompt and output')
    .option('--sources', 'the sources with their citation numbers')
    .option('--claims', 'every claim of the latest report and how it fared against its sources')
    .action(
      async (id: string, options: { steps?: boolean; prompts?: boolean; sources?: boolean; claims?: boolean }) => {
        const { displayLocation } = await import('../../research/citations.ts');
        const { clarifyingQuestionsOf, clarifyingText } = await import('../../research/clarify.ts');
        const { conversationWithExchanges, outlineOf, outlineText } = await import('../../service/outline-question.ts');
        const { listSessionSteps, resolveSessionId, showSession } = await import('../../service/session-queries.ts');
        const context = await runtime.open();
        const view = await showSession(context, await resolveSessionId(context, id));
        // A LangGraph thread has no journal of Quarry's: its graph's checkpoints say where it stands.
        if (view.session.workflow.name === 'langgraph') {
          const { showGraphThread } = await import('../graph-thread.ts');
          if (!runtime.json)
            printLine(`${view.session.title}\n\nid        ${view.session.id}\nstatus    ${view.session.status}`);
          return showGraphThread(runtime, view.session);
        }
        // The whole journal is read for the conversation too: its answered questions are steps.
        const steps = await listSessionSteps(context, view.session.id, { includePrompts: options.prompts });
        const conversation = conversationWithExchanges(view.messages, steps);
        if (runtime.json) {
          printJson({ ...view, conversation, ...(options.steps || options.prompts ? { steps } : {}) });
          return;
        }
        const { session, resumePoint } = view;
        printLine(`${session.title}\n`);
        printLine(
          formatTable(
            ['', ''],
            [
              ['id', session.id],
              ['status', session.status + (session.error ? ` (${session.error.code}: ${session.error.message})` : '')],
              ['progress', `${progressText(session)}; next step: ${resumePoint.nextStep ?? 'none'}`],
              ['spent', ledgerText(view.ledger)],
              ['question', session.question],
              ['settings', JSON.stringify(session.settings)],
              ['created', `${new Date(session.createdAt).toISOString()} (${relativeTime(session.createdAt)})`],
              ['updated', `${new Date(session.updatedAt).toISOString()} (${relativeTime(session.updatedAt)})`],
            ],
            [12, 200],
          )
            .split('\n')
            .slice(1)
            .join('\n'),
        );
        const state = view.researchState;
        if (state) {
          const tokens = Object.values(state.tokensPerSource).reduce((sum, count) => sum + count, 0);
          const lines = [
            state.aspects.covered.length ? `covered: ${state.aspects.covered.join('; ')}` : '',
            state.aspects.open.length ? `open: ${state.aspects.open.join('; ')}` : '',
            state.topics.irrelevant.length ? `found nothing: ${state.topics.irrelevant.join('; ')}` : '',
            state.preferences.length ? `you asked for: ${state.preferences.join('; ')}` : '',
            `${Object.keys(state.tokensPerSource).length} sources read, ${state.tokensEstimated ? 'about ' : ''}${tokens} tokens`,
            state.findings ? `findings: ${state.findings}` : '',
          ].filter(Boolean);
          printLine(`\nResearch state:\n${lines.map((line) => `  ${line}`).join('\n')}`);
        }
        if (view.pendingInput) {
          const { payload, key } = view.pendingInput;
          const questions = clarifyingQuestionsOf(payload);
          const outline = outlineOf(payload);
          const short = shortId(session.id);
          printLine(
            questions
              ? `\n${clarifyingText(questions)}\nAnswer: quarry ask ${short} "<your answers>" (or skip)`
              : outline
                ? `\nThe outline of "${outline.title}":\n\n${outlineText(outline)}\n\nApprove it: quarry ask ${short} approve — or say what to change: quarry ask ${short} "<what to change>"`
                : `\nWaiting for input "${key}": quarry ask ${short} "<your answer>"`,
          );
        }
        printLine('\nConversation:');
        for (const turn of conversation) {
          const text = turn.content.length > 200 ? `${turn.content.slice(0, 200)}…` : turn.content;
          printLine(`  ${turn.role}: ${text.replaceAll('\n', '\n    ')}`);
        }
        if (options.steps || options.prompts) {
          printLine('\nSteps:');
          let phase: string | null | undefined;
          for (const step of steps) {
            if (step.phase !== phase) {
              phase = step.phase;
              printLine(`  ${phase ?? '(no phase)'}`);
            }
            const tokens = step.usage
              ? ` · ${(step.usage.inputTokens ?? 0) + (step.usage.outputTokens ?? 0)} tokens`
              : '';
            printLine(`    ${step.key} · ${step.status} · ${formatDuration(step)} · attempt ${step.attempts}${tokens}`);
            if (options.prompts && step.prompt) {
              printLine(
                `      model: ${step.usage?.model ?? '?'}\n      system: ${step.prompt.system ?? ''}\n      user: ${step.prompt.user}\n      output: ${JSON.stringify(step.output)}`,
              );
            }
          }
        }
        if (options.sources) {
          printLine('\nSources:');
          for (const source of view.sources)
            printLine(
              `  ${source.citation ? `[${source.citation}]` : '[ ]'} ${source.title} <${displayLocation(source.url)}>`,
            );
        }
        const latest = view.reports.at(-1);
        if (options.claims) {
          const claims = latest?.claims ?? [];
          const marks = { supported: '✓', unsupported: '✗', uncited: '?' } as const;
          printLine(`\nClaims${latest ? ` of report version ${latest.version}` : ''}:`);
          if (claims.length === 0)
            printLine(
              latest?.report.includes('quoted word for word')
                ? '  (none: the report quotes its sources word for word and makes no claim of its own to check)'
                : '  (none recorded)',
            );
          for (const claim of claims) {
            const unknown = claim.unknownCitations?.length
              ? ` · cited unknown ${claim.unknownCitations.map((number) => `[${number}]`).join(', ')}`
              : '';
            printLine(`  ${marks[claim.verdict]} ${claim.verdict} · ${claim.claim}\n      ${claim.reason}${unknown}`);
          }
        }
        if (latest) printLine(`\nReport (version ${latest.version} of ${view.reports.length}):\n\n${latest.report}`);
      },
    );
}
