/**
 * When parallel nodes' writes are stored: the saver crash benchmark's thread (rounds of parallel
 * nodes) run to its end in a warm process, each node's end and the moment its writes were stored
 * (`putWrites` resolved) timed in the process, on QuarrySaver and LangGraph's PostgresSaver in turn.
 * A kill between a node's end and its writes stored makes that node run again on resume; how the
 * writes of one round spread over time says whether a kill takes one node or the whole round.
 * Run alone: `node --import tsx bench/compare/compare-saver-writes.ts` (`SAVER_WRITES_THREADS`).
 * Beside busy processes it shows the busy case (bench/README, "LangGraph killed at any moment").
 */
import { performance } from 'node:perf_hooks';
import { envInteger, inPostgresSchema, median, percentile, pgBenchUrl, printTable } from '../bench-lib.ts';
import { closeSaver, logStoredWrites, openSaver, ROUNDS, runThread, WIDTH } from './saver-crash-child.ts';

const THREADS = envInteger('SAVER_WRITES_THREADS', 10);

interface Timing {
  /** From each node's end to its writes stored, ms. */
  lags: number[];
  /** Per round, from its first write stored to its last, ms. */
  spreads: number[];
}

async function timeSaver(kind: 'quarry' | 'postgres', schema: string): Promise<Timing> {
  const saver = await openSaver(kind, schema);
  let measured: string | null = null;
  const ended = new Map<string, number>();
  const stored = new Map<string, number>();
  logStoredWrites(
    saver,
    () => measured,
    (_target, line) => stored.set(line.slice('saved '.length), performance.now()),
  );
  const record = (line: string) => {
    if (line.startsWith('end ')) ended.set(line.slice('end '.length), performance.now());
  };
  // Warm: the connections have run every statement once before the measured threads.
  await runThread(saver, `${kind}-warm-up`, '', false, () => undefined);
  const timing: Timing = { lags: [], spreads: [] };
  for (let index = 0; index < THREADS; index++) {
    ended.clear();
    stored.clear();
    measured = `${kind}-${index}`;
    await runThread(saver, measured, '', false, record);
    const rounds = new Map<string, number[]>();
    for (const [node, at] of stored) {
      const end = ended.get(node);
      if (end !== undefined) timing.lags.push(at - end);
      const round = node.split(':')[0]!;
      rounds.set(round, [...(rounds.get(round) ?? []), at]);
    }
    for (const times of rounds.values()) timing.spreads.push(Math.max(...times) - Math.min(...times));
  }
  await closeSaver(saver);
  return timing;
}

export async function run(): Promise<void> {
  console.log(
    `\nInputs: ${THREADS} threads per checkpointer of ${ROUNDS} rounds of ${WIDTH} parallel nodes, after one warm-up thread, on PostgreSQL at ${new URL(pgBenchUrl).host}.`,
  );
  const rows: (string | number)[][] = [];
  for (const [kind, label] of [
    ['postgres', 'LangGraph PostgresSaver'],
    ['quarry', 'LangGraph on QuarrySaver (PostgreSQL)'],
  ] as const) {
    await inPostgresSchema(
      async (schema) => {
        const { lags, spreads } = await timeSaver(kind, schema);
        rows.push([
          label,
          lags.length,
          `${median(lags).toFixed(1)} ms / ${percentile(lags, 90).toFixed(1)} ms`,
          `${median(spreads).toFixed(1)} ms / ${percentile(spreads, 90).toFixed(1)} ms`,
        ]);
      },
      (reason) => rows.push([label, reason, '', '']),
    );
  }
  printTable(
    'LangGraph parallel writes: from a node’s end to its writes stored, and how a round’s writes spread',
    [
      'checkpointer',
      'nodes timed',
      'end → stored (median / p90)',
      'a round’s writes, first to last stored (median / p90)',
    ],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
