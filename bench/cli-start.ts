/**
 * CLI start: wall time of `quarry --help` and `quarry ls` (100 sessions, SQLite and PostgreSQL) as a
 * user runs them, beside the limit: a bare `node` process, all in Node's default environment (see
 * `userEnv`). Goal: at most 2× the bare process. Each command runs as a fresh process, 25 times, the
 * commands taking turns; medians and p90. The timing loop runs in a small process of its own
 * (bench/spawn-timer.mjs).
 *
 * Two layouts of the compiled CLI: installed (bin/ and dist/ as `npm install` lays them out, no
 * sources) and this checkout (bin/quarry first checks that no source changed since the build). Both
 * with the compile cache a first run leaves (bin/load-compiled.cjs), and the installed one once
 * without it, as the first command after an install or an upgrade runs.
 * Run alone: `node --import tsx bench/cli-start.ts`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { openStore } from '../src/store/open-store.ts';
import { formatMs, inPostgresSchema, median, percentile, pgBenchUrl, printTable, tempFolder } from './bench-lib.ts';

const RUNS = 25;
const SESSIONS = 100;
const root = fileURLToPath(new URL('..', import.meta.url));
const addon = createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');

/**
 * What any command on each database pays before Quarry's own code: node loading the database client
 * as Quarry's build loads it (bundled; better-sqlite3's addon by its path, pg without its fetch probe:
 * see src/store/sqlite/sqlite-driver.ts and scripts/build-cli.mjs) and reading one row.
 */
const clientFloor = {
  sqlite:
    "const D = require('better-sqlite3'); const db = new D(process.argv[2], { nativeBinding: process.argv[3] }); db.prepare('SELECT count(*) FROM sessions').get(); db.close();",
  postgres:
    "globalThis.navigator = { userAgent: 'Node.js' }; const pg = require('pg'); delete globalThis.navigator; const c = new pg.Client(process.argv[2]); c.connect().then(() => c.query('SELECT 1')).then(() => c.end());",
};

/** A database client's floor as one bundled script in `folder`, as the CLI's build bundles it. */
async function bundledFloor(folder: string, client: keyof typeof clientFloor): Promise<string> {
  const outfile = join(folder, `${client}-floor.cjs`);
  await build({
    stdin: { contents: clientFloor[client], resolveDir: root, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    external: ['pg-native', 'pg-cloudflare', '*.node'],
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

/** The compiled CLI as an install lays it out: bin/, dist/cli and package.json, no sources. */
function installedCopy(folder: string): string {
  const installed = join(folder, 'installed');
  mkdirSync(join(installed, 'dist'), { recursive: true });
  cpSync(join(root, 'bin'), join(installed, 'bin'), { recursive: true });
  cpSync(join(root, 'dist', 'cli'), join(installed, 'dist', 'cli'), { recursive: true });
  cpSync(join(root, 'package.json'), join(installed, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(installed, 'node_modules'));
  return join(installed, 'bin', 'quarry');
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
  // Measure the compiled CLI users run: bin/quarry falls back to tsx when src is newer than the build.
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], { encoding: 'utf8' });
  const record = join(root, 'dist', 'cli', 'BUILT');
  if (built.status !== 0 || !existsSync(record)) {
    console.log(`\nCLI start: not run, the CLI did not build: ${built.stderr}`);
    return;
  }
  console.log(
    `\nCLI start: ${RUNS} runs each of bin/quarry (compiled ${statSync(record).mtime.toISOString()}); ls lists ${SESSIONS} sessions.`,
  );
  const rows: string[][] = [];
  const home = tempFolder('cli-start');
  try {
    const db = join(home.path, 'quarry.db');
    await addSessions(db);
    const installed = installedCopy(home.path);
    const checkout = join(root, 'bin', 'quarry');
    // The compile cache of these runs only: the spawn timer's unmeasured first run of each writes it.
    const cached = { XDG_CACHE_HOME: join(home.path, 'cache') };
    const uncached = { NODE_DISABLE_COMPILE_CACHE: '1' };
    const on = (store: string) => ({ QUARRY_HOME: home.path, QUARRY_DB: store, ...cached });
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
      { name: 'quarry --help, installed', args: [installed, '--help'], env: on(db) },
      { name: 'quarry --help, checkout', args: [checkout, '--help'], env: on(db) },
      {
        name: 'node + better-sqlite3 bundled, one query (SQLite floor)',
        args: [await bundledFloor(home.path, 'sqlite'), db, addon],
      },
      { name: 'quarry ls (SQLite), installed', args: [installed, 'ls'], env: on(db) },
      {
        name: 'quarry ls (SQLite), installed, no compile cache',
        args: [installed, 'ls'],
        env: { ...on(db), ...uncached },
      },
      { name: 'quarry ls (SQLite), checkout', args: [checkout, 'ls'], env: on(db) },
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
          `${(median(values) / bare).toFixed(2)}×`,
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
            args: [await bundledFloor(home.path, 'postgres'), pgBenchUrl],
          },
          { name: 'quarry ls (PostgreSQL), installed', args: [installed, 'ls'], env: on(url) },
          { name: 'quarry ls (PostgreSQL), checkout', args: [checkout, 'ls'], env: on(url) },
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
