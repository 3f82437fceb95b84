/**
 * LangGraph checkpointers killed at any moment: a thread of rounds of parallel nodes runs in a child
 * process that is SIGKILLed at a seeded random moment (its nodes log when they start and end), then
 * the thread is resumed; a node that had ended before the kill and runs again lost its writes.
 * QuarrySaver beside LangGraph's PostgresSaver, both on PostgreSQL, the same kill times for both;
 * in a fresh process (the thread is the first thing it runs, on new connections) and in a warm one
 * (it ran a thread before). Run alone: `node --import tsx bench/compare/compare-saver-crash.ts`.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inPostgresSchema, printTable, tempFolder } from '../bench-lib.ts';
import { closeSaver, openSaver, ROUNDS, runThread, WIDTH } from './saver-crash-child.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const KILLS = Number(process.env.SAVER_CRASH_KILLS ?? 10);

function lines(log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
}

/** Kill moments after the first node starts, in ms: seeded, so both savers are killed alike. */
function killMoments(count: number): number[] {
  let seed = 20261128;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  // Within a thread's run (about 450 ms here), so each kill lands mid-run.
  return Array.from({ length: count }, () => Math.round(30 + next() * 370));
}

async function killedOnce(
  kind: 'quarry' | 'postgres',
  schema: string,
  thread: string,
  afterMs: number,
  folder: string,
  warm: boolean,
) {
  const log = join(folder, `${kind}-${warm ? 'warm' : 'fresh'}-${thread}.log`);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, 'saver-crash-child.ts'), kind, schema, thread, log, warm ? 'warm' : 'fresh'],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const deadline = Date.now() + 60_000;
  while (lines(log).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  child.kill('SIGKILL');
  await exited;
  const ended = new Set(
    lines(log)
      .filter((line) => line.startsWith('end '))
      .map((line) => line.slice(4)),
  );
  const before = lines(log).length;
  const saver = await openSaver(kind, schema);
  try {
    await runThread(saver, thread, log, true);
  } finally {
    await closeSaver(saver);
  }
  const rerun = lines(log)
    .slice(before)
    .filter((line) => line.startsWith('start ') && ended.has(line.slice(6)));
  return { ended: ended.size, rerun: rerun.length };
}

export async function run(): Promise<void> {
  const moments = killMoments(KILLS);
  console.log(
    `\nInputs: ${ROUNDS} rounds of ${WIDTH} parallel nodes (40 ms each) per thread; ${KILLS} kills per checkpointer at ${moments.join(', ')} ms after the first node starts.`,
  );
  const rows: (string | number)[][] = [];
  const folder = tempFolder('saver-crash');
  try {
    for (const [label, kind, warm] of [
      ['LangGraph PostgresSaver, fresh process', 'postgres', false],
      ['LangGraph on QuarrySaver (PostgreSQL), fresh process', 'quarry', false],
      ['LangGraph PostgresSaver, warm process', 'postgres', true],
      ['LangGraph on QuarrySaver (PostgreSQL), warm process', 'quarry', true],
    ] as const) {
      await inPostgresSchema(
        async (schema) => {
          let ended = 0;
          let rerun = 0;
          const perKill: number[] = [];
          for (const [index, afterMs] of moments.entries()) {
            const result = await killedOnce(kind, schema, `thread-${index}`, afterMs, folder.path, warm);
            ended += result.ended;
            rerun += result.rerun;
            perKill.push(result.rerun);
          }
          rows.push([label, ended, rerun, perKill.join(' ')]);
        },
        (reason) => rows.push([label, reason, '', '']),
      );
    }
  } finally {
    folder.remove();
  }
  printTable(
    'LangGraph checkpointers killed at any moment: nodes that had ended before the kill and ran again on resume',
    ['checkpointer', 'nodes ended before the kills', 'of them run again', 'per kill'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
