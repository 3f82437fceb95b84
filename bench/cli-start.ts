/**
 * CLI start: wall time of `quarry --help` and `quarry ls` (100 sessions, SQLite and PostgreSQL) as
 * built, beside a bare `node -e 0`. Goal: `--help` within 3× the bare process; start-up is not what
 * users feel (a research run takes seconds to minutes), so this only guards against a regression
 * that would be. Each command runs as a fresh process, 25 times, the commands taking turns; medians
 * and p90. The timing loop runs in a small process of its own (bench/spawn-timer.mjs).
 * Run alone: `node --import tsx bench/cli-start.ts`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../src/store/open-store.ts';
import { formatMs, inPostgresSchema, median, percentile, pgBenchUrl, printTable, tempFolder } from './bench-lib.ts';

const RUNS = 25;
const SESSIONS = 100;
const root = fileURLToPath(new URL('..', import.meta.url));

interface Command {
  name: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

/** Wall times of `RUNS` fresh processes of each command, in ms, timed by bench/spawn-timer.mjs. */
function times(commands: Command[]): number[][] {
  const input = {
    runs: RUNS,
    cwd: root,
    commands: commands.map(({ args, env }) => ({ args, env: { ...process.env, ...env } })),
  };
  const timer = spawnSync(process.execPath, [join(root, 'bench', 'spawn-timer.mjs')], {
    input: JSON.stringify(input),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (timer.status !== 0) throw new Error(`bench/spawn-timer.mjs exited ${timer.status}: ${timer.stderr}`);
  return JSON.parse(timer.stdout) as number[][];
}

async function addSessions(db: string): Promise<void> {
  const store = await openStore({ db });
  try {
    for (let index = 0; index < SESSIONS; index++)
      await store.createSession({
        ownerId: 'local',
        title: `Session ${index}`,
        question: `Question ${index}?`,
        workflow: { name: 'deep-research', version: 1 },
      });
  } finally {
    await store.close();
  }
}

export async function run(): Promise<void> {
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--no-types'], { encoding: 'utf8' });
  if (built.status !== 0 || !existsSync(join(root, 'dist', 'cli', 'main.js'))) {
    console.log(`\nCLI start: not run, the CLI did not build: ${built.stderr}`);
    return;
  }
  const bin = join(root, 'bin', 'quarry');
  const rows: string[][] = [];
  const home = tempFolder('cli-start');
  try {
    const db = join(home.path, 'quarry.db');
    await addSessions(db);
    const on = (store: string) => ({ QUARRY_HOME: home.path, QUARRY_DB: store });
    const commands: Command[] = [
      { name: 'bare node -e 0 (the limit)', args: ['-e', '0'] },
      { name: 'quarry --help', args: [bin, '--help'], env: on(db) },
      { name: `quarry ls (SQLite, ${SESSIONS} sessions)`, args: [bin, 'ls'], env: on(db) },
    ];
    const measure = () => {
      const all = times(commands);
      const bare = median(all[0]!);
      commands.forEach((command, index) => {
        const values = all[index]!;
        rows.push([
          command.name,
          formatMs(median(values)),
          formatMs(percentile(values, 90)),
          `${(median(values) / bare).toFixed(2)}×`,
        ]);
      });
    };
    await inPostgresSchema(
      async (schema) => {
        const url = `${pgBenchUrl}${pgBenchUrl.includes('?') ? '&' : '?'}schema=${schema}`;
        await addSessions(url);
        commands.push({ name: `quarry ls (PostgreSQL, ${SESSIONS} sessions)`, args: [bin, 'ls'], env: on(url) });
        measure();
      },
      (reason) => {
        measure();
        rows.push(['quarry ls (PostgreSQL)', reason, '', '']);
      },
    );
  } finally {
    home.remove();
  }
  printTable(
    'CLI start, wall time of a fresh process (goal: --help ≤ 3× a bare node process)',
    ['command', 'median', 'p90', 'against bare node'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
