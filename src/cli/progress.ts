import { followEvents } from '../service/follow-events.ts';
import type { StoredEvent, Store } from '../store/store.ts';

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
  const data = (event.data ?? {}) as Record<string, unknown>;
  const at = `[${elapsed(startedAt)}]`;
  switch (event.type) {
    case 'run-start':
      return `${at} run-start run ${data.number}${data.resumeAt ? `, resuming at ${data.resumeAt}` : ''}`;
    case 'phase-start':
      return `${at} phase-start ${data.phase}`;
    case 'step-start':
      return `${at} step-start ${data.key}${Number(data.attempt) > 1 ? ` (attempt ${data.attempt})` : ''}`;
    case 'step-end': {
      const usage = data.usage as { inputTokens?: number; outputTokens?: number } | null;
      const tokens = usage ? `, ${(usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)} tokens` : '';
      return `${at} step-end ${data.key} ${data.status}${data.durationMs !== undefined ? ` in ${data.durationMs} ms` : ''}${tokens}`;
    }
    case 'source-found':
      return `${at} source-found ${data.title} <${data.url}>`;
    case 'input-request':
      return `${at} input-request ${data.key}`;
    case 'run-end':
      return `${at} run-end ${data.status}${data.reason ? ` (${data.reason})` : ''}`;
    case 'run-error':
      return `${at} run-error ${data.code}: ${data.message}`;
    case 'claim-flag':
      return `${at} claim-flag "${String(data.claim).slice(0, 80)}"`;
    case 'report-delta':
      return null;
    default:
      return `${at} ${event.type}`;
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

  constructor(
    private readonly store: Store,
    private readonly sessionId: string,
    private readonly mode: ProgressMode,
    private readonly write: (text: string) => void = (text) => process.stdout.write(text),
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
      for await (const event of followEvents(this.store, this.sessionId, { after: this.offset, signal: this.controller.signal, pollMs: 500 })) this.show(event);
    })().catch(() => undefined);
  }

  /** Shows every event committed so far, then stops following. */
  async stop(): Promise<void> {
    const { lastEventOffset } = await this.store.getSession(this.sessionId).catch(() => ({ lastEventOffset: 0 }));
    for (let wait = 0; this.offset < lastEventOffset && wait < 100; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
    this.controller.abort();
    await this.following;
    if (this.timer) clearInterval(this.timer);
    this.clearStatus();
  }

  private show(event: StoredEvent): void {
    this.offset = Math.max(this.offset, event.offset);
    this.count(event);
    if (this.mode === 'json') {
      this.write(`${JSON.stringify({ sessionId: event.sessionId, offset: event.offset, type: event.type, data: event.data, createdAt: new Date(event.createdAt).toISOString() })}\n`);
      return;
    }
    const line = plainLine(event, this.startedAt);
    if (this.mode === 'plain') {
      if (line) this.write(`${line}\n`);
      return;
    }
    // On a terminal only milestones stay on screen; the rest lives in the status line.
    if (['phase-start', 'run-start', 'run-end', 'run-error', 'input-request', 'claim-flag'].includes(event.type) && line) {
      this.clearStatus();
      this.write(`${line}\n`);
    }
    this.drawStatus();
  }

  private count(event: StoredEvent): void {
    const data = (event.data ?? {}) as Record<string, unknown>;
    if (event.type === 'phase-start') this.tally.phase = String(data.phase);
    if (event.type === 'step-start') this.tally.current = String(data.key);
    if (event.type === 'source-found') this.tally.sources += 1;
    if (event.type === 'step-end' && data.status === 'completed') {
      this.tally.steps += 1;
      const usage = data.usage as { inputTokens?: number; outputTokens?: number } | null;
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
