/**
 * CLI start: wall time of `quarry --help` and `quarry ls` (100 sessions, SQLite and PostgreSQL) as a
 * user runs them (`bin/quarry.mjs`, compiled first), beside the limit: a bare `node` process, all in
 * Node's default environment (see `userEnv`). Goal: at most 2× the bare process. Each command runs
 * as a fresh process, 15 times, the commands taking turns; medians and p90. The timing loop runs in
 * a small process of its own (bench/spawn-timer.mjs).
 * Run alone: `node --import tsx bench/cli-start.ts`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { openStore } from '../src/store/open-store.ts';
import { formatMs, inPostgresSchema, median, percentile, pgBenchUrl, printTable, tempFolder } from './bench-lib.ts';

const RUNS = 15;
const SESSIONS = 100;
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'quarry.mjs');

/**
 * What any command on each database pays before Quarry's own code: node loading the database client
 * and reading one row. pg is loaded as Quarry loads it: bundled into one file by esbuild, without its
 * fetch probe (see src/store/postgres/pg.ts and scripts/build-cli.mjs).
 */
const clientFloor = {
  sqlite:
    "const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.prepare('SELECT count(*) FROM sessions').get(); db.close();",
  postgres:
    "globalThis.navigator = { userAgent: 'Node.js' }; const pg = require('pg'); delete globalThis.navigator; const c = new pg.Client(process.argv[2]); c.connect().then(() => c.query('SELECT 1')).then(() => c.end());",
};

/** The PostgreSQL floor as one bundled script in `folder`, as the CLI's build bundles pg. */
async function bundledPgFloor(folder: string): Promise<string> {
  const outfile = join(folder, 'pg-floor.cjs');
  await build({
    stdin: { contents: clientFloor.postgres, resolveDir: root, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    external: ['pg-native', 'pg-cloudflare'],
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

interface Command {
  name: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * The environment every command runs in: this one without NODE_EXTRA_CA_CERTS. Node 20 reads those
 * certificates as it starts, whether or not the process ever opens a TLS connection (about 28 ms on
 * a machine that sets it to the system bundle): a limit inflated by it made every ratio look better.
 * When it is set here, its cost is shown in a row of its own.
 */
const { NODE_EXTRA_CA_CERTS: extraCaCerts, ...userEnv } = process.env;

/** Wall times of `RUNS` fresh processes of each command, in ms, timed by bench/spawn-timer.mjs. */
function times(commands: Command[]): number[][] {
  const input = {
    runs: RUNS,
    cwd: root,
    commands: commands.map(({ args, env }) => ({ args, env: { ...userEnv, ...env } })),
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
  // Measure the compiled CLI users run: bin/quarry.mjs falls back to tsx when src is newer than the build.
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], { encoding: 'utf8' });
  const built = join(root, 'dist', 'cli', 'BUILT');
  if (build.status !== 0 || !existsSync(built)) {
    console.log(`\nCLI start: not run, the CLI did not build: ${build.stderr}`);
    return;
  }
  console.log(
    `\nCLI start: ${RUNS} runs each of bin/quarry.mjs (compiled ${statSync(built).mtime.toISOString()}); ls lists ${SESSIONS} sessions.`,
  );
  const rows: string[][] = [];
  const home = tempFolder('cli-start');
  try {
    const db = join(home.path, 'quarry.db');
    await addSessions(db);
    const env = { QUARRY_HOME: home.path, QUARRY_DB: db };
    const commands: Command[] = [
      { name: 'bare node process (limit)', args: ['-e', '0'] },
      ...(extraCaCerts
        ? [
            {
              name: "bare node process with this machine's NODE_EXTRA_CA_CERTS (not the limit)",
              args: ['-e', '0'],
              env: { NODE_EXTRA_CA_CERTS: extraCaCerts },
            },
          ]
        : []),
      { name: 'quarry --help', args: [bin, '--help'], env },
      { name: 'node + better-sqlite3, one query (SQLite floor)', args: ['-e', clientFloor.sqlite, db] },
      { name: 'quarry ls (SQLite)', args: [bin, 'ls'], env },
    ];
    const withoutPostgres = commands.length;
    const measure = () => {
      const all = times(commands);
      const bare = median(all[0]!);
      commands.forEach((command, index) => {
        const values = all[index]!;
        rows.push([
          command.name,
          formatMs(median(values)),
          formatMs(percentile(values, 90)),
          `${(median(values) / bare).toFixed(1)}×`,
        ]);
      });
    };
    await inPostgresSchema(
      async (schema) => {
        const url = `${pgBenchUrl}${pgBenchUrl.includes('?') ? '&' : '?'}schema=${schema}`;
        await addSessions(url);
        commands.push(
          {
            name: 'node + pg bundled, connect and one query (PostgreSQL floor)',
            args: [await bundledPgFloor(home.path), pgBenchUrl],
          },
          { name: 'quarry ls (PostgreSQL)', args: [bin, 'ls'], env: { QUARRY_HOME: home.path, QUARRY_DB: url } },
        );
        measure();
      },
      (reason) => {
        rows.length = 0;
        commands.splice(withoutPostgres);
        measure();
        rows.push(['quarry ls (PostgreSQL)', reason, '', '']);
      },
    );
  } finally {
    home.remove();
  }
  printTable(
    'CLI start, wall time of a fresh process (goal: ≤ 2× a bare node process)',
    ['command', 'median', 'p90', 'against bare node'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
