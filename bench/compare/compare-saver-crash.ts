/**
 * LangGraph checkpointers killed at any moment: a thread of rounds of parallel nodes runs in a child
 * process that is SIGKILLed at a seeded random moment (its nodes log when they start and end), then
 * the thread is resumed; a node that had ended before the kill and runs again lost its writes:
 * the kill came before they were stored, or they were stored but their checkpoint was not yet (the
 * child logs each node's writes once `putWrites` resolved, counted in a column of their own).
 * QuarrySaver beside LangGraph's PostgresSaver, both on PostgreSQL: each kill moment kills both, one
 * after the other (paired, so the machine's load weighs on both alike); in a fresh process (the
 * thread is the first thing it runs, on new connections) and in a warm one (it ran a thread before).
 * Run alone: `node --import tsx bench/compare/compare-saver-crash.ts` (`SAVER_CRASH_KILLS`,
 * `SAVER_CRASH_SEED`).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envInteger, inPostgresSchema, printTable, tempFolder } from '../bench-lib.ts';
import { closeSaver, openSaver, ROUNDS, runThread, WIDTH } from './saver-crash-child.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const KILLS = envInteger('SAVER_CRASH_KILLS', 10);

function lines(log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
}

/** Kill moments after the first node starts, in ms: seeded, so both savers are killed alike. */
function killMoments(count: number): number[] {
  // `SAVER_CRASH_SEED` draws other moments: a second draw checks a first one's finding.
  let seed = envInteger('SAVER_CRASH_SEED', 20261128, 0);
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
  const stored = new Set(
    lines(log)
      .filter((line) => line.startsWith('saved '))
      .map((line) => line.slice(6)),
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
  return {
    ended: ended.size,
    rerun: rerun.length,
    storedRerun: rerun.filter((line) => stored.has(line.slice(6))).length,
  };
}

/** Both savers, each in its own schema, killed at the same moment; which goes first alternates. */
async function pairedKills(warm: boolean, moments: number[], folder: string) {
  const totals = { postgres: { ended: 0, rerun: 0, storedRerun: 0 }, quarry: { ended: 0, rerun: 0, storedRerun: 0 } };
  const perKill: { postgres: number; quarry: number }[] = [];
  await inPostgresSchema(
    (postgresSchema) =>
      inPostgresSchema(
        async (quarrySchema) => {
          for (const [index, afterMs] of moments.entries()) {
            const order = index % 2 === 0 ? (['postgres', 'quarry'] as const) : (['quarry', 'postgres'] as const);
            const pair = { postgres: 0, quarry: 0 };
            for (const kind of order) {
              const schema = kind === 'postgres' ? postgresSchema : quarrySchema;
              const result = await killedOnce(kind, schema, `thread-${index}`, afterMs, folder, warm);
              totals[kind].ended += result.ended;
              totals[kind].rerun += result.rerun;
              totals[kind].storedRerun += result.storedRerun;
              pair[kind] = result.rerun;
            }
            perKill.push(pair);
          }
        },
        (reason) => {
          throw new Error(reason);
        },
      ),
    (reason) => {
      throw new Error(reason);
    },
  );
  return { totals, perKill };
}

export async function run(): Promise<void> {
  const moments = killMoments(KILLS);
  console.log(
    `\nInputs: ${ROUNDS} rounds of ${WIDTH} parallel nodes (40 ms each) per thread; ${KILLS} kills per checkpointer at ${moments.join(', ')} ms after the first node starts. Each moment kills both checkpointers, one after the other (which goes first alternates), so a change in the machine's load weighs on both alike.`,
  );
  const rows: (string | number)[][] = [];
  const folder = tempFolder('saver-crash');
  try {
    for (const warm of [false, true]) {
      const mode = warm ? 'warm process' : 'fresh process';
      try {
        const { totals, perKill } = await pairedKills(warm, moments, folder.path);
        const more = perKill.filter((pair) => pair.quarry > pair.postgres).length;
        const fewer = perKill.filter((pair) => pair.quarry < pair.postgres).length;
        const paired = `QuarrySaver more in ${more}, fewer in ${fewer}, the same in ${perKill.length - more - fewer}`;
        rows.push([
          `LangGraph PostgresSaver, ${mode}`,
          totals.postgres.ended,
          totals.postgres.rerun,
          totals.postgres.storedRerun,
          perKill.map((pair) => pair.postgres).join(' '),
          '',
        ]);
        rows.push([
          `LangGraph on QuarrySaver (PostgreSQL), ${mode}`,
          totals.quarry.ended,
          totals.quarry.rerun,
          totals.quarry.storedRerun,
          perKill.map((pair) => pair.quarry).join(' '),
          paired,
        ]);
      } catch (error) {
        rows.push([mode, (error as Error).message.replace(/^(skipped: )+/, 'skipped: '), '', '', '', '']);
      }
    }
  } finally {
    folder.remove();
  }
  printTable(
    'LangGraph checkpointers killed at any moment: nodes that had ended before the kill and ran again on resume',
    [
      'checkpointer',
      'nodes ended before the kills',
      'of them run again',
      'of those, stored before the kill',
      'per kill',
      'kill by kill',
    ],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
