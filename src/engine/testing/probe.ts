import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/**
 * Counts how often each step's work really runs, in this process and, through a log file, across
 * processes. A hook may hold a call (to interrupt or kill at an exact step boundary).
 */
export class Probe {
  readonly calls = new Map<string, number>();
  /** Called when work for `key` starts; may return a promise that holds the work. */
  hook: ((key: string, index: number) => void | Promise<void>) | null = null;
  private started = 0;

  constructor(private readonly logFile?: string) {}

  async call<T>(key: string, work: () => T | Promise<T>): Promise<T> {
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
    if (this.logFile) appendFileSync(this.logFile, `start ${key}\n`);
    const index = this.started++;
    await this.hook?.(key, index);
    const result = await work();
    if (this.logFile) appendFileSync(this.logFile, `end ${key}\n`);
    return result;
  }

  count(key: string): number {
    return this.calls.get(key) ?? 0;
  }
}

/** Starts per key recorded in a probe log file (all processes that wrote it). */
export function readProbeLog(logFile: string): { starts: Map<string, number>; lines: string[] } {
  const lines = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean) : [];
  const starts = new Map<string, number>();
  for (const line of lines) {
    const [kind, key] = line.split(' ');
    if (kind === 'start' && key) starts.set(key, (starts.get(key) ?? 0) + 1);
  }
  return { starts, lines };
}
