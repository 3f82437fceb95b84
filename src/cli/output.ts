import type { Session } from '../store/store.ts';

/** The first 8 characters of an id; any unique prefix is accepted back. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function relativeTime(then: number, now = Date.now()): string {
  const seconds = Math.round((now - then) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 30) return `${days} d ago`;
  return new Date(then).toISOString().slice(0, 10);
}

export function progressText(session: Session): string {
  const { phase, completedSteps, knownSteps } = session.progress;
  if (knownSteps === 0) return '-';
  return `${phase ?? 'start'} ${completedSteps}/${knownSteps}`;
}

function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** Left-aligned columns; the last column is not padded. */
export function formatTable(header: string[], rows: string[][], maxWidths: number[] = []): string {
  const all = [header, ...rows].map((row) => row.map((cell, index) => truncate(cell, maxWidths[index] ?? 80)));
  const widths = header.map((_, index) => Math.max(...all.map((row) => row[index]!.length)));
  return all
    .map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  '))
    .join('\n');
}

/**
 * A line on standard output, written to the stream as it is: console.log formats its arguments first,
 * and its first call costs a command about half a millisecond.
 */
export function printLine(text: string): void {
  writeOut(`${text}\n`);
}

/** Text to standard output, unless its reader has gone. */
export function writeOut(text: string): void {
  if (!outputClosed) process.stdout.write(text);
}

/** JSON for `--json`: one object per line. */
export function printJson(value: unknown): void {
  writeOut(`${JSON.stringify(value)}\n`);
}

let outputClosed = false;
let onOutputClosed: (() => void) | null = null;

/**
 * What to do when the reader of standard output goes away (`quarry run … | head -3`): a command
 * doing work stops it cleanly and says so; without a handler the command ends at once, as a
 * command that only prints has nothing left to do. Returns the unregister.
 */
export function whenOutputCloses(handler: () => void): () => void {
  onOutputClosed = handler;
  return () => {
    if (onOutputClosed === handler) onOutputClosed = null;
  };
}

/** Called on EPIPE: true when a handler took it (the process goes on to end cleanly). */
export function outputWasClosed(): boolean {
  if (outputClosed) return true;
  outputClosed = true;
  if (!onOutputClosed) return false;
  onOutputClosed();
  return true;
}
