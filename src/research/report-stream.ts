import type { AnalystCall } from './analyst.ts';
import { newMarkerScan, replaceMarkers } from './citation-markers.ts';
import type { ResearchContext } from './research-context.ts';

/**
 * Reports are written to be read while they are written: a report is append-only. Its text is the
 * title, then each section as its model drafts it (citation markers renumbered in order of first
 * citation as they appear), then the check of its claims and its sources. What a model writes
 * streams to clients as `report-delta` events while the step runs, and the finished report starts
 * with exactly the text that streamed: a client never sees text the journal does not end up holding.
 *
 * Each streamed piece belongs to the step that writes it (its key) and counts its characters from 0
 * for every attempt of that step: a delta at offset 0 for a key that already has text means the
 * step started again (after a crash), and its new text replaces the old.
 */

/** What may still become a marker once more text arrives: white space, then `[`, digits, commas. */
const OPEN_TAIL = /\s*(?:\[[\d,\s]*)?$/;

/**
 * Renumbers a draft's citation markers as they stream: a known number gets the next number at its
 * first citation (numbers already given keep theirs), markers of unknown numbers go with the white
 * space before them, and the text is trimmed. Fed the whole draft at once or in any pieces, it
 * writes the same text (`renumberDraft` is the whole-draft form).
 */
export class CitationStream {
  private pending = '';
  private started = false;
  /** Where the text renumbered so far ends: in prose, code or a quote (markers are read in prose only). */
  private readonly scan = newMarkerScan();

  /** `order`: old number → new number, shared by the report's sections and extended here. */
  constructor(
    private readonly order: Map<number, number>,
    private readonly known: (number: number) => boolean,
  ) {}

  /** Takes more of the draft; returns the text that is now final. */
  push(delta: string): string {
    this.pending += delta;
    if (!this.started) {
      this.pending = this.pending.trimStart();
      if (!this.pending) return '';
      this.started = true;
    }
    const open = OPEN_TAIL.exec(this.pending)!.index;
    const ready = this.pending.slice(0, open);
    this.pending = this.pending.slice(open);
    return this.renumber(ready);
  }

  /** The rest, once the draft is complete (trailing white space dropped). */
  end(): string {
    const rest = this.renumber(this.pending.trimEnd());
    this.pending = '';
    return rest;
  }

  private renumber(text: string): string {
    return replaceMarkers(
      text,
      (_match, space: string, list: string) => {
        const numbers = list.split(',').map((item) => Number(item.trim()));
        const mapped: number[] = [];
        for (const number of numbers) {
          if (!this.known(number)) continue;
          if (!this.order.has(number)) this.order.set(number, this.order.size + 1);
          const renumbered = this.order.get(number)!;
          if (!mapped.includes(renumbered)) mapped.push(renumbered);
        }
        return mapped.length ? `${space}[${mapped.join(', ')}]` : '';
      },
      this.scan,
    );
  }
}

/** A whole draft renumbered as `CitationStream` streams it. */
export function renumberDraft(draft: string, order: Map<number, number>, known: (number: number) => boolean): string {
  const stream = new CitationStream(order, known);
  return stream.push(draft) + stream.end();
}

/** How long deltas wait to be sent together: a few events a second, not one per token. */
const FLUSH_MS = 150;
const FLUSH_CHARS = 400;

/**
 * Sends one step's streamed text as `report-delta` events, a few at a time. `start()` begins an
 * attempt (offsets count from 0 again); `write` adds final text; `flush` sends what is waiting.
 * Sending never fails the step: a client that misses a delta reads the finished report.
 */
export class DeltaSender {
  private offset = 0;
  private waiting = '';
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: ResearchContext,
    private readonly piece: { key: string; message: boolean; section?: number; title?: string },
  ) {}

  start(): void {
    this.offset = 0;
    this.waiting = '';
  }

  write(text: string): void {
    if (!text) return;
    this.waiting += text;
    if (this.waiting.length >= FLUSH_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Sends what is waiting; resolves once everything written so far is sent. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.waiting) {
      const text = this.waiting;
      const offset = this.offset;
      this.offset += text.length;
      this.waiting = '';
      this.sending = this.sending.then(() =>
        this.ctx.emit('report-delta', { ...this.piece, offset, text }).catch(() => undefined),
      );
    }
    return this.sending;
  }
}

/**
 * An analyst's writing call whose text streams while it is written: `opening` (a section's heading),
 * the draft with its markers renumbered from `order` as it stood before (each attempt starts from
 * there again), then `closing`. What streamed is what `renumberDraft` makes of the draft the step
 * records; an analyst whose output differs from its deltas (or that sends none) has its piece sent
 * again whole at the end, as a restart.
 */
export function streamed(
  ctx: ResearchContext,
  piece: { key: string; message: boolean; section?: number; title?: string },
  { opening, closing }: { opening: string; closing: string },
  order: ReadonlyMap<number, number>,
  known: (number: number) => boolean,
  make: (onDelta: (delta: string) => void) => AnalystCall<string>,
): AnalystCall<string> {
  const sender = new DeltaSender(ctx, piece);
  let stream: CitationStream | null = null;
  let sent = '';
  const send = (text: string) => {
    sent += text;
    sender.write(text);
  };
  const call = make((delta) => {
    if (stream) send(stream.push(delta));
  });
  return {
    ...call,
    run: async (signal) => {
      const before = new Map(order);
      stream = new CitationStream(new Map(before), known);
      sent = '';
      sender.start();
      send(opening);
      try {
        const result = await call.run(signal);
        send(`${stream.end()}${closing}`);
        const expected = `${opening}${renumberDraft(result.output, new Map(before), known)}${closing}`;
        if (sent !== expected) {
          sender.start();
          sender.write(expected);
        }
        return result;
      } finally {
        stream = null;
        await sender.flush();
      }
    },
  };
}
