import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../src/store/conformance/harness.ts';
import { PostgresDriver } from '../../src/store/postgres/postgres-driver.ts';
import { postgresSkipReason, postgresTestUrl } from '../../src/store/postgres/postgres-harness.ts';
import { within } from '../support/bounds.ts';
import { quotedParagraphs, startFakeWebSite } from '../support/fake-web-site.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

function runAsync(command: string, args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * Quarry as a user gets it: `npm pack`, installed into an empty folder from the tarball, with no
 * sources and no dev dependencies (issue 21). The run and the server work from what was packed.
 * The install skips install scripts and takes better-sqlite3's addon from this checkout, built by
 * its own `npm ci` for this Node (compiling it again from C took a minute of every test run).
 */
describe('the packed package, installed in an empty folder', () => {
  let folder: string;
  let home: string;
  let quarry: string;

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'quarry-package-'));
    home = join(folder, 'home');
    execFileSync(npm, ['pack', '--pack-destination', folder, '--silent', '--ignore-scripts'], {
      cwd: root,
      stdio: 'ignore',
    });
    const tarball = readdirSync(folder).find((name) => name.endsWith('.tgz'))!;
    writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'quarry-user', private: true }));
    execFileSync(
      npm,
      ['install', '--no-audit', '--no-fund', '--omit=dev', '--ignore-scripts', '--prefer-offline', `./${tarball}`],
      { cwd: folder, stdio: 'ignore', timeout: within(600_000) },
    );
    cpSync(
      join(root, 'node_modules', 'better-sqlite3', 'build'),
      join(folder, 'node_modules', 'better-sqlite3', 'build'),
      {
        recursive: true,
      },
    );
    quarry = join(folder, 'node_modules', '.bin', 'quarry');
    cpSync(join(root, 'test', 'fixtures', 'corpus'), join(folder, 'docs'), { recursive: true });
  }, within(660_000));
  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  const env = () => ({ PATH: process.env.PATH, HOME: folder, QUARRY_HOME: home });

  it('ships the compiled CLI and the built web UI, not the sources or the tests', () => {
    const installed = join(folder, 'node_modules', 'quarry');
    expect(existsSync(join(installed, 'dist', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'langgraph', 'index.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'types', 'langgraph', 'index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'web', 'dist', 'index.html'))).toBe(true);
    for (const absent of ['src', 'test', 'bench', '.ci', 'scripts'])
      expect(existsSync(join(installed, absent))).toBe(false);
    const version = spawnSync(quarry, ['--version'], { env: env(), encoding: 'utf8' });
    expect(version.stdout.trim()).toBe(
      JSON.parse(
        execFileSync('node', ['-p', 'JSON.stringify(require("./package.json").version)'], {
          cwd: root,
          encoding: 'utf8',
        }),
      ),
    );
  });

  it('researches a question over local documents', () => {
    const run = spawnSync(
      quarry,
      ['run', 'How does tidal power generate electricity?', '--docs', join(folder, 'docs')],
      {
        env: env(),
        encoding: 'utf8',
        timeout: within(120_000),
      },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('## Sources');
    expect(run.stdout).toContain('tidal-energy.txt');
  });

  it('reads the web pages a search finds', async () => {
    const site = await startFakeWebSite();
    try {
      const result = await runAsync(
        quarry,
        ['run', 'How do tidal power plants generate electricity?', '--search', 'searxng'],
        {
          ...env(),
          SEARXNG_URL: site.baseUrl,
          QUARRY_FETCH_ALLOW: '127.0.0.1',
        },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(quotedParagraphs(result.stdout).length).toBeGreaterThan(0);
    } finally {
      await site.stop();
    }
  });

  it.skipIf(postgresSkipReason() !== null)('opens a PostgreSQL store', async () => {
    const schema = `quarry_pkg_${Math.random().toString(36).slice(2, 10)}`;
    const url = new URL(postgresTestUrl!);
    url.searchParams.set('schema', schema);
    try {
      const listed = spawnSync(quarry, ['--db', url.toString(), 'ls'], { env: env(), encoding: 'utf8' });
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout).toContain('No sessions yet');
    } finally {
      const driver = new PostgresDriver(postgresTestUrl!);
      await driver.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await driver.close();
    }
  });

  it('serves the API and the web UI', async () => {
    const server = spawn(quarry, ['serve', '--port', '0', '--docs', join(folder, 'docs')], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    server.stderr.on('data', (chunk) => (stderr += chunk));
    try {
      await eventually(() => /listening on (http:\/\/\S+?) /.test(stderr), 60_000);
      const url = /listening on (http:\/\/\S+?) /.exec(stderr)![1]!;
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="root">');
    } finally {
      server.kill('SIGTERM');
    }
  });

  it(
    'gives LangGraph.js apps quarry/langgraph, with their own LangGraph packages',
    () => {
      // The application brings @langchain/core and @langchain/langgraph-checkpoint (optional peers).
      const versions = JSON.parse(
        execFileSync('node', ['-p', 'JSON.stringify(require("./package.json").devDependencies)'], {
          cwd: root,
          encoding: 'utf8',
        }),
      ) as Record<string, string>;
      execFileSync(
        npm,
        [
          'install',
          '--no-audit',
          '--no-fund',
          `@langchain/core@${versions['@langchain/core']}`,
          `@langchain/langgraph-checkpoint@${versions['@langchain/langgraph-checkpoint']}`,
          `typescript@${versions.typescript}`,
          `@types/node@${versions['@types/node']}`,
        ],
        { cwd: folder, stdio: 'ignore', timeout: within(600_000) },
      );
      const script = `
      import { QuarrySaver } from 'quarry/langgraph';
      import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
      const saver = await QuarrySaver.open(process.argv[2]);
      const checkpoint = { ...emptyCheckpoint(), id: '1ef00000-0000-6000-8000-000000000001', channel_values: { log: ['a'] }, channel_versions: { log: 1 } };
      await saver.put({ configurable: { thread_id: 't1', checkpoint_ns: '' } }, checkpoint, { source: 'input', step: -1, parents: {} }, { log: 1 });
      const tuple = await saver.getTuple({ configurable: { thread_id: 't1' } });
      console.log(JSON.stringify(tuple.checkpoint.channel_values));
      await saver.close();
    `;
      writeFileSync(join(folder, 'saver.mjs'), script);
      const db = join(folder, 'langgraph.db');
      const run = spawnSync('node', ['saver.mjs', db], { cwd: folder, encoding: 'utf8', timeout: within(60_000) });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe('{"log":["a"]}');
      // The thread is a Quarry session.
      const listed = spawnSync(quarry, ['--db', db, 'ls'], { env: env(), encoding: 'utf8' });
      expect(listed.stdout).toContain('LangGraph thread t1');

      // A TypeScript application gets the saver's types (issue 35: it got TS7016). Were they `any`,
      // the expected error would not happen and tsc would fail on the unused directive.
      writeFileSync(
        join(folder, 'typed.mts'),
        `import { QuarrySaver } from 'quarry/langgraph';
       import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
       const saver: BaseCheckpointSaver = await QuarrySaver.open('typed.db');
       // @ts-expect-error open takes a location string
       await QuarrySaver.open(42);
       export { saver };`,
      );
      writeFileSync(
        join(folder, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'] },
          files: ['typed.mts'],
        }),
      );
      const typed = spawnSync(
        process.execPath,
        [join(folder, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', folder],
        {
          cwd: folder,
          encoding: 'utf8',
          timeout: within(120_000),
        },
      );
      expect(typed.status, typed.stdout + typed.stderr).toBe(0);
    },
    within(660_000),
  );
});
