import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresSkipReason, postgresTestUrl } from '../../src/store/postgres/postgres-harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'quarry');
const fixtures = join(root, 'test', 'fixtures', 'upgrade');
const corpus = join(root, 'test', 'fixtures', 'corpus');
/** The commits whose stores are kept as fixtures (see make-fixture.sh), oldest first. */
const commits = readdirSync(fixtures, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const made: string[] = [];
afterAll(() => {
  for (const folder of made) rmSync(folder, { recursive: true, force: true });
});

interface Listed {
  id: string;
  question: string;
  status: string;
}

/**
 * Upgrade safety: stores an earlier Quarry wrote (three points of its history, SQLite and
 * PostgreSQL), opened by today's code: it migrates them, lists and shows them, finishes the session
 * left waiting, resumes the one stopped before it ran, and exports them.
 */
function checkStore(db: string, docs: string) {
  const env = childEnv({ QUARRY_DB: db });
  const quarry = (args: string[]) => {
    const result = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8', timeout: within(30_000) });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const ls = quarry(['--json', 'ls']);
  expect(ls.code, ls.stderr).toBe(0);
  const sessions = ls.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Listed);
  const status = (question: string) => sessions.find((session) => session.question.startsWith(question));
  expect(status('How does tidal power')?.status).toBe('completed');
  expect(status('What limits tidal barrages')?.status).toBe('waiting');
  expect(status('Why do calderas form')?.status).toBe('interrupted');
  const finished = status('How does tidal power')!.id;

  const shown = quarry(['show', finished, '--steps', '--sources']);
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toContain('user: When did La Rance open?');
  expect(shown.stdout).toMatch(/## Sources/);
  const exported = quarry(['export', finished, '--format', 'json']);
  expect(exported.code, exported.stderr).toBe(0);
  expect(JSON.parse(exported.stdout).session.id).toBe(finished);
  expect(quarry(['export', finished, '--format', 'md']).stdout).toContain('La Rance');

  const approved = quarry(['ask', status('What limits tidal barrages')!.id, 'approve']);
  expect(approved.code, approved.stderr).toBe(0);
  expect(approved.stdout).toContain('## Sources');
  // Its documents folder is gone with the machine that wrote it: resumed over this one.
  const resumed = quarry(['resume', status('Why do calderas form')!.id, '--docs', docs, '--replace-sources']);
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(resumed.stdout).toMatch(/caldera/i);
  const again = quarry(['--json', 'ls']);
  expect(again.stdout.match(/"status":"completed"/g)).toHaveLength(3);
}

describe.each(commits)('a store written by Quarry at %s', (commit) => {
  const folder = join(fixtures, commit);
  const fresh = () => {
    const made_ = mkdtempSync(join(tmpdir(), 'quarry-upgrade-'));
    made.push(made_);
    cpSync(corpus, join(made_, 'docs'), { recursive: true });
    return made_;
  };

  it('on SQLite: listed, shown, finished, resumed and exported by today’s Quarry', { timeout: within(120_000) }, () => {
    const home = fresh();
    cpSync(join(folder, 'quarry.db'), join(home, 'quarry.db'));
    checkStore(join(home, 'quarry.db'), join(home, 'docs'));
  });

  it('as an export file: imported by today’s Quarry', { timeout: within(60_000) }, () => {
    const home = fresh();
    const env = childEnv({ QUARRY_DB: join(home, 'quarry.db') });
    const imported = spawnSync(process.execPath, [bin, 'import', join(folder, 'export.json')], {
      env,
      encoding: 'utf8',
      timeout: within(30_000),
    });
    expect(imported.status, imported.stderr).toBe(0);
    const id = JSON.parse(readFileSync(join(folder, 'export.json'), 'utf8')).session.id as string;
    const shown = spawnSync(process.execPath, [bin, 'show', id], { env, encoding: 'utf8', timeout: within(30_000) });
    expect(shown.stdout).toContain('user: When did La Rance open?');
  });

  it.skipIf(postgresSkipReason() !== null || !existsSync(join(folder, 'postgres.sql')))(
    'on PostgreSQL: listed, shown, finished, resumed and exported by today’s Quarry',
    { timeout: within(120_000) },
    async () => {
      const home = fresh();
      const schema = `upgrade_t_${Math.random().toString(36).slice(2, 10)}`;
      // The dump names the schema it was written in; restored under a name of this test's own.
      const dump = readFileSync(join(folder, 'postgres.sql'), 'utf8').replaceAll(`upgrade_${commit}`, schema);
      const client = new pg.Client({ connectionString: postgresTestUrl });
      await client.connect();
      try {
        await client.query(dump.replace(/^\\\w.*$/gm, ''));
        const url = new URL(postgresTestUrl!);
        url.searchParams.set('schema', schema);
        checkStore(url.toString(), join(home, 'docs'));
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    },
  );
});
