import { followEvents } from '../service/follow-events.ts';
import { raceAbort } from '../shared/concurrency.ts';
import { type StoredEvent, toWireEvent } from '../shared/events.ts';
import { StreamedText } from '../shared/streamed-text.ts';
import { unreachable } from '../shared/unreachable.ts';
import type { OwnerStore } from '../store/owner-store.ts';
import { writeOut } from './output.ts';

export type ProgressMode = 'tty' | 'plain' | 'json';

interface Tally {
  phase: string;
  steps: number;
  sources: number;
  tokens: number;
  current: string;
}

const spinner = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

function elapsed(startedAt: number): string {
  const seconds = Math.floor((Date.now() - startedAt) / 1000);
  return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
}

function plainLine(event: StoredEvent, startedAt: number): string | null {
  const at = `[${elapsed(startedAt)}]`;
  switch (event.type) {
    case 'run-start':
      return `${at} run-start run ${event.data.number}${event.data.resumeAt ? `, resuming at ${event.data.resumeAt}` : ''}`;
    case 'phase-start':
      return `${at} phase-start ${event.data.phase}`;
    case 'step-start':
      return `${at} step-start ${event.data.key}${event.data.attempt > 1 ? ` (attempt ${event.data.attempt})` : ''}`;
    case 'step-end': {
      const { usage, durationMs } = event.data;
      const tokens = usage ? `, ${(usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)} tokens` : '';
      return `${at} step-end ${event.data.key} ${event.data.status}${durationMs !== undefined ? ` in ${durationMs} ms` : ''}${tokens}`;
    }
    case 'step-retry':
      return `${at} step-retry ${event.data.error.code}: waiting ${Math.round(event.data.delayMs / 1000)} s (${event.data.error.message})`;
    case 'source-found':
      return `${at} source-found ${event.data.title} <${event.data.url}>`;
    case 'index-progress':
      return `${at} index-progress ${event.data.done}/${event.data.total} files of ${event.data.folder}`;
    case 'notes-take': {
      const unverified = event.data.unverified
        ? ` (${event.data.unverified} with quotes not in the source, never cited)`
        : '';
      return `${at} notes-take ${event.data.count} from ${event.data.title}${unverified}`;
    }
    case 'findings-update':
      return `${at} findings-update iteration ${event.data.iteration}: ${event.data.summary.slice(0, 160)}`;
    case 'input-request':
      return `${at} input-request ${event.data.key}`;
    case 'input-receive':
      return `${at} input-receive ${event.data.key}`;
    case 'run-end':
      return `${at} run-end ${event.data.status}${event.data.reason ? ` (${event.data.reason})` : ''}`;
    case 'run-error':
      return `${at} run-error ${event.data.code}: ${event.data.message}`;
    case 'run-rewind':
      return `${at} run-rewind from ${event.data.step}`;
    case 'claim-flag':
      return `${at} claim-flag ${event.data.verdict} "${event.data.claim.slice(0, 80)}"`;
    case 'report-delta':
      return null;
    case 'session-update':
      return `${at} session-update${event.data.title !== undefined ? ` title "${event.data.title}"` : ''}${event.data.settings ? ' settings' : ''}`;
    case 'session-create':
    case 'session-fork':
    case 'session-import':
      return `${at} ${event.type}`;
    default:
      return unreachable(event);
  }
}

/**
 * Live progress of a session from its event log: an in-place status line on a terminal, one plain
 * line per event when piped, one JSON object per event with `--json`. Reads the store, so it shows
 * the same events whichever process runs the session.
 */
export class Progress {
  private offset: number;
  private readonly startedAt = Date.now();
  private readonly tally: Tally = { phase: 'start', steps: 0, sources: 0, tokens: 0, current: '' };
  private readonly controller = new AbortController();
  private following: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private frame = 0;
  private statusShown = false;
  private readonly streamed = new StreamedText();
  /** The report text shown as it was written (on a terminal), whole lines only; null once it diverged. */
  private printed: string | null = '';

  constructor(
    private readonly store: Pick<OwnerStore, 'readEvents' | 'subscribe' | 'getSession'>,
    private readonly sessionId: string,
    private readonly mode: ProgressMode,
    private readonly write: (text: string) => void = writeOut,
    fromOffset = 0,
  ) {
    this.offset = fromOffset;
  }

  start(): void {
    if (this.mode === 'tty') {
      this.timer = setInterval(() => this.drawStatus(), 120);
      this.timer.unref();
    }
    this.following = (async () => {
      for await (const event of followEvents(this.store, this.sessionId, {
        after: this.offset,
        signal: this.controller.signal,
        pollMs: 500,
      }))
        this.show(event);
    })().catch(() => undefined);
  }

  /**
   * Shows every event committed so far, then stops following. A store that has not answered by
   * `deadline` (a silent network partition) does not hold the command: what is shown is shown.
   */
  async stop(deadline: AbortSignal): Promise<void> {
    const lastEventOffset = await raceAbort(
      this.store.getSession(this.sessionId).then((session) => session.lastEventOffset),
      deadline,
    ).catch(() => 0);
    for (let wait = 0; this.offset < lastEventOffset && wait < 100 && !deadline.aborted; wait++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    this.controller.abort();
    await this.following;
    if (this.timer) clearInterval(this.timer);
    this.clearStatus();
  }

  private show(event: StoredEvent): void {
    this.offset = Math.max(this.offset, event.offset);
    this.count(event);
    if (this.mode === 'json') {
      this.write(`${JSON.stringify({ sessionId: event.sessionId, ...toWireEvent(event) })}\n`);
      return;
    }
    const line = plainLine(event, this.startedAt);
    if (this.mode === 'plain') {
      if (line) this.write(`${line}\n`);
      return;
    }
    if (event.type === 'report-delta') {
      if (event.data.message) this.showWriting(event.data);
      return;
    }
    // On a terminal only milestones stay on screen; the rest lives in the status line.
    if (
      ['phase-start', 'run-start', 'run-end', 'run-error', 'input-request', 'claim-flag'].includes(event.type) &&
      line
    ) {
      this.clearStatus();
      this.write(`${line}\n`);
    }
    this.drawStatus();
  }

  /**
   * The report as it is written, on a terminal: whole lines above the status line. A step that
   * starts over with other text stops this (the finished report is then printed whole).
   */
  private showWriting(delta: { key: string; offset: number; text: string }): void {
    this.streamed.apply(delta);
    if (this.printed === null) return;
    const text = this.streamed.text;
    if (!text.startsWith(this.printed)) {
      if (!this.printed.startsWith(text)) this.printed = null;
      return;
    }
    const fresh = text.slice(this.printed.length);
    const lines = fresh.slice(0, fresh.lastIndexOf('\n') + 1);
    if (!lines) return;
    if (this.printed === '') {
      this.clearStatus();
      this.write('\n');
    }
    this.clearStatus();
    this.write(lines);
    this.printed += lines;
    this.drawStatus();
  }

  /** What of the report was printed as it was written (empty when nothing was, or it diverged). */
  get printedReport(): string {
    return this.printed ?? '';
  }

  private count(event: StoredEvent): void {
    if (event.type === 'phase-start') this.tally.phase = event.data.phase;
    if (event.type === 'step-start') this.tally.current = event.data.key;
    if (event.type === 'source-found') this.tally.sources += 1;
    if (event.type === 'step-end' && event.data.status === 'completed') {
      this.tally.steps += 1;
      const usage = event.data.usage;
      this.tally.tokens += (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0);
    }
  }

  private drawStatus(): void {
    if (this.mode !== 'tty') return;
    const { phase, steps, sources, tokens, current } = this.tally;
    const status = `${spinner[this.frame++ % spinner.length]} ${phase} · ${steps} steps · ${sources} sources · ${tokens} tokens · ${elapsed(this.startedAt)}${current ? ` · ${current}` : ''}`;
    const width = process.stdout.columns ?? 100;
    this.write(`\r\x1b[2K${status.slice(0, width - 1)}`);
    this.statusShown = true;
  }

  private clearStatus(): void {
    if (this.mode === 'tty' && this.statusShown) this.write('\r\x1b[2K');
    this.statusShown = false;
  }
}
