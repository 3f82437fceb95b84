import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** Runs the CLI without blocking this process (whose fake servers must keep answering). */
function runAsync(args: string[], env: NodeJS.ProcessEnv): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

import type { TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';
import { fakeModelEnv } from '../support/test-config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'quarry');
const fixtures = join(root, 'test', 'fixtures', 'corpus');
const QUESTION = 'How does tidal power generate electricity?';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The command line through the real executable, on one store backend: each command must do its job
 * and exit (a command that hangs after printing fails its spawn's timeout).
 */
export function describeCommandLine(backend: 'sqlite' | 'postgres') {
  describe.skipIf(backend === 'postgres' && postgresSkipReason() !== null)(`quarry command line on ${backend}`, () => {
    let home: string;
    let docs: string;
    let env: NodeJS.ProcessEnv;
    let database: TestDatabase | undefined;

    function quarry(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Result {
      const result = spawnSync(process.execPath, [bin, ...args], {
        cwd: root,
        env: { ...env, ...extraEnv },
        encoding: 'utf8',
        // A command that prints and then hangs (an open connection) fails here.
        timeout: within(30_000),
      });
      return { code: result.status, stdout: result.stdout, stderr: result.stderr };
    }

    function idOf(result: Result): string {
      const first = JSON.parse(result.stdout.split('\n')[0]!) as { sessionId: string };
      return first.sessionId;
    }

    beforeEach(async () => {
      home = mkdtempSync(join(tmpdir(), 'quarry-cli-'));
      docs = join(home, 'docs');
      cpSync(fixtures, docs, { recursive: true });
      env = childEnv({ QUARRY_HOME: home });
      if (backend === 'postgres') {
        database = await postgresHarness.create();
        env.QUARRY_DB = database.location;
      }
    });
    afterEach(async () => {
      await database?.destroy();
      database = undefined;
      rmSync(home, { recursive: true, force: true });
    });

    it('runs a research piped: one plain line per event, then the report and the session id', () => {
      const result = quarry(['run', QUESTION, '--docs', docs]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^\[\d\d:\d\d\] run-start run 1$/m);
      expect(result.stdout).toMatch(/^\[\d\d:\d\d\] step-end plan completed in \d+ ms$/m);
      expect(result.stdout).toContain('# How does tidal power generate electricity');
      expect(result.stdout).toContain('## Sources');
      expect(result.stdout).toMatch(/Session [0-9a-f-]{36} completed/);
      expect(result.stdout).not.toContain('\x1b[');
      if (backend === 'sqlite') expect(existsSync(join(home, 'quarry.db'))).toBe(true);
    });

    it('prints one JSON object per line with --json, the first carrying the session id', () => {
      const result = quarry(['--json', 'run', QUESTION, '--docs', docs]);
      expect(result.code, result.stderr).toBe(0);
      const lines = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines[0]).toMatchObject({ type: 'session', sessionId: expect.any(String) });
      expect(lines.some((line) => line.type === 'step-end')).toBe(true);
      expect(lines.at(-1)).toMatchObject({
        type: 'result',
        status: 'completed',
        report: expect.stringContaining('## Sources'),
      });
    });

    it('updates a status line in place on a terminal', () => {
      const command = [process.execPath, bin, 'run', JSON.stringify(QUESTION), '--docs', docs].join(' ');
      const result = spawnSync('script', ['-qec', command, '/dev/null'], {
        cwd: root,
        env: { ...env, COLUMNS: '120' },
        encoding: 'utf8',
        timeout: within(60_000),
      });
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toContain('\r\x1b[2K');
      expect(result.stdout).toMatch(/phase-start write/);
      expect(result.stdout).toContain('## Sources');
    });

    it('refuses a model it cannot use with exit 2 before touching a session: run, resume, ask, config', () => {
      const model = ['--model', 'openai:gpt-4.1-mini'];
      const run = quarry(['run', QUESTION, '--docs', docs, ...model]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('OPENAI_API_KEY');
      expect(quarry(['run', QUESTION, '--docs', docs, '--model', 'nope:x']).code).toBe(2);
      expect(quarry(['--json', 'ls']).stdout.trim()).toBe('');
      // Sessions made while the key was there: one queued, one finished and then set to use the model.
      const queued = idOf(
        quarry(['--json', 'run', QUESTION, '--docs', docs, ...model, '--detach'], { OPENAI_API_KEY: 'k' }),
      );
      const finished = idOf(quarry(['--json', 'run', QUESTION, '--docs', docs]));
      expect(quarry(['config', finished, 'model=openai:gpt-4.1-mini'], { OPENAI_API_KEY: 'k' }).code).toBe(0);
      const shown = (id: string) => JSON.parse(quarry(['--json', 'show', id]).stdout) as Record<string, unknown>;
      const before = [shown(queued), shown(finished)];
      for (const args of [
        ['resume', queued],
        ['ask', finished, 'And where else?'],
        ['config', finished, 'fastModel=anthropic:claude-haiku-4-5'],
      ]) {
        const refused = quarry(args);
        expect(refused.code, args.join(' ')).toBe(2);
        expect(refused.stderr, args.join(' ')).toMatch(/OPENAI_API_KEY|ANTHROPIC_API_KEY/);
      }
      expect([shown(queued), shown(finished)]).toEqual(before);
    });

    it('manages users and their tokens: several each, with expiry, revoked one at a time', () => {
      const added = quarry(['users', 'add', 'alice']);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toMatch(/^qry_[\w-]{20,}$/m);
      const second = quarry(['users', 'token', 'add', 'alice', '--expires', '30d', '--label', 'laptop']);
      expect(second.stdout).toMatch(/expires \d{4}-\d\d-\d\dT/);
      const tokens = quarry(['--json', 'users', 'token', 'ls'])
        .stdout.trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string; label: string; expiresAt: number | null });
      expect(tokens.map((token) => token.label).sort()).toEqual(['created with the user', 'laptop']);
      // The tokens themselves are never listed, only their ids.
      expect(quarry(['users', 'token', 'ls']).stdout).not.toContain('qry_');
      const laptop = tokens.find((token) => token.label === 'laptop')!;
      expect(quarry(['users', 'token', 'rm', laptop.id]).code).toBe(0);
      expect(quarry(['--json', 'users', 'token', 'ls']).stdout).not.toContain(laptop.id);
      const missing = quarry(['users', 'token', 'rm', laptop.id]);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/token/i);
      expect(quarry(['users', 'token', 'add', 'alice', '--expires', 'soon']).code).toBe(2);
      expect(quarry(['users', 'rm', 'alice']).code).toBe(0);
      expect(quarry(['users', 'token', 'ls']).stdout).not.toContain('alice');
    });

    it('hands the local user’s sessions to the first user when told, says so when not, and acts as a user with --as (issue 46)', () => {
      const id = idOf(quarry(['--json', 'run', QUESTION, '--docs', docs]));
      const added = quarry(['users', 'add', 'bob']);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toContain('This store has 1 session of the local user');
      expect(added.stdout).toContain('quarry users adopt bob');
      // Still the local user's, so still listed here.
      expect(quarry(['--json', 'ls']).stdout).toContain(id);

      const adopted = quarry(['users', 'adopt', 'bob']);
      expect(adopted.code, adopted.stderr).toBe(0);
      expect(adopted.stdout).toContain('Handed 1 session of the local user to bob');
      expect(quarry(['--json', 'ls']).stdout).not.toContain(id);
      expect(quarry(['--json', '--as', 'bob', 'ls']).stdout).toContain(id);
      const shown = quarry(['--as', 'bob', 'show', id.slice(0, 8)]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain(QUESTION);
      const nobody = quarry(['--as', 'nobody', 'ls']);
      expect(nobody.code).not.toBe(0);
      expect(nobody.stderr).toContain('No user named "nobody"');

      // At creation: a new local session goes straight to the new user.
      const second = idOf(quarry(['--json', 'run', QUESTION, '--docs', docs]));
      const carol = JSON.parse(quarry(['--json', 'users', 'add', 'carol', '--adopt-local']).stdout) as {
        adopted: number;
        localSessions: number;
      };
      expect(carol).toMatchObject({ adopted: 1, localSessions: 0 });
      expect(quarry(['--json', '--as', 'carol', 'ls']).stdout).toContain(second);
    });

    it('resumes at once after the process running it was killed, and stops a dead process’s session', async () => {
      const fake = await new FakeOpenAiServer(schemaFakeModel()).start();
      try {
        const modelEnv = {
          ...env,
          ...fakeModelEnv(fake.baseUrl),
        };
        const killed = async () => {
          // Killed while it waits for its fourth model call, however fast or slow the machine.
          fake.holdAfter(3);
          const child = spawn(process.execPath, [bin, '--json', 'run', QUESTION, '--docs', docs, '--iterations', '1'], {
            env: modelEnv,
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let stdout = '';
          child.stdout.on('data', (chunk) => (stdout += chunk));
          const exited = new Promise((resolve) => child.on('exit', resolve));
          await fake.waitUntilHeld();
          child.kill('SIGKILL');
          await exited;
          fake.release();
          return (JSON.parse(stdout.split('\n')[0]!) as { sessionId: string }).sessionId;
        };
        const first = await killed();
        // No waiting for the dead process's lease to expire (15 s): resume takes over at once.
        const resumed = await runAsync(['resume', first.slice(0, 8)], modelEnv);
        expect(resumed.code, resumed.stderr).toBe(0);
        // The same run goes on where it was (its resume point is named when a step was in flight;
        // killed between two steps there is none to name): the plan, made before the kill, is not made again.
        expect(resumed.stdout).toMatch(/run-start run 1\b/);
        expect(resumed.stdout).not.toMatch(/step-start plan\b/);
        const second = await killed();
        const stopped = quarry(['stop', second.slice(0, 8)], modelEnv);
        expect(stopped.code, stopped.stderr).toBe(0);
        expect(JSON.parse(quarry(['--json', 'show', second]).stdout).session.status).toBe('interrupted');
        expect((await runAsync(['resume', second.slice(0, 8)], modelEnv)).code).toBe(0);
      } finally {
        await fake.stop();
      }
    });

    it('stops a run cleanly when its output is closed (quarry run … | head), exiting 130, resumable (issue 36)', async () => {
      const fake = await new FakeOpenAiServer(schemaFakeModel()).start();
      try {
        fake.holdAfter(2);
        const child = spawn(process.execPath, [bin, '--json', 'run', QUESTION, '--docs', docs, '--iterations', '1'], {
          env: {
            ...env,
            ...fakeModelEnv(fake.baseUrl),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        const firstLine = new Promise<string>((resolve) =>
          child.stdout.on('data', (chunk) => {
            stdout += chunk;
            if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
          }),
        );
        const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
        const { sessionId } = JSON.parse(await firstLine) as { sessionId: string };
        await fake.waitUntilHeld();
        // The reader goes away, as `head -1` does after its line.
        child.stdout.destroy();
        fake.release();
        expect(await exited, stderr).toBe(130);
        expect(stderr).toContain('output was closed');
        expect(JSON.parse(quarry(['--json', 'show', sessionId]).stdout).session.status).toBe('interrupted');
      } finally {
        await fake.stop();
      }
    });

    it('tells the terminal of a session deleted while it ran that nothing is left to resume (issue 34)', async () => {
      const fake = await new FakeOpenAiServer(schemaFakeModel()).start();
      fake.holdAfter(2);
      try {
        const modelEnv = {
          ...env,
          ...fakeModelEnv(fake.baseUrl),
        };
        const child = spawn(process.execPath, [bin, '--json', 'run', QUESTION, '--docs', docs], {
          env: modelEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        child.stderr.on('data', (chunk) => (stderr += chunk));
        const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
        await fake.waitUntilHeld();
        const id = (JSON.parse(stdout.split('\n')[0]!) as { sessionId: string }).sessionId;
        const removed = await runAsync(['rm', '--force', '--yes', id.slice(0, 8)], modelEnv);
        expect(removed.code, removed.stderr).toBe(0);
        expect(await exited).toBe(4);
        expect(stdout + stderr).not.toMatch(/quarry resume/);
        expect(stdout).toContain('"status":"deleted"');
      } finally {
        await fake.stop();
      }
    });

    it('carries on an interrupted session when run again with its external id, and says a waiting one waits', () => {
      const queued = quarry(['--json', 'run', QUESTION, '--docs', docs, '--external-id', 'job-7', '--detach']);
      const id = idOf(queued);
      expect(quarry(['stop', id]).code).toBe(0);
      expect(JSON.parse(quarry(['--json', 'show', id]).stdout).session.status).toBe('interrupted');
      const again = quarry(['run', QUESTION, '--docs', docs, '--external-id', 'job-7']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain('It was interrupted: resuming it.');
      expect(again.stdout).toContain('## Sources');
      expect(JSON.parse(quarry(['--json', 'show', id]).stdout).session.status).toBe('completed');
      // Once more: the finished session is returned as it is.
      const done = quarry(['run', QUESTION, '--docs', docs, '--external-id', 'job-7']);
      expect(done.code).toBe(0);
      expect(done.stdout).toContain(`Session ${id} (completed)`);
      const waiting = quarry(['run', QUESTION, '--docs', docs, '--external-id', 'job-8', '--review-outline']);
      expect(waiting.code).toBe(3);
      expect(quarry(['run', QUESTION, '--docs', docs, '--external-id', 'job-8']).code).toBe(3);
    });

    it('lists, shows, renames, forks, exports, imports and deletes sessions by id prefix', () => {
      const id = idOf(quarry(['--json', 'run', QUESTION, '--docs', docs, '--external-id', 'job-42']));
      const short = id.slice(0, 8);
      // The caller's own id names the session as well as its id does.
      expect(JSON.parse(quarry(['--json', 'show', 'job-42']).stdout).session.id).toBe(id);
      const listed = quarry(['ls']);
      expect(listed.stdout).toMatch(
        new RegExp(`^${short}\\s+How does tidal power generate electricity\\s+completed`, 'm'),
      );
      const shown = quarry(['show', short.slice(0, 5), '--steps', '--sources']);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`id        ${id}`);
      // The ledger, as the API gives it (issue 33).
      const { ledger } = JSON.parse(quarry(['--json', 'show', id]).stdout) as {
        ledger: { searches: number; sourcesRead: number };
      };
      expect(ledger.searches).toBeGreaterThan(0);
      expect(shown.stdout).toContain(
        `spent     ${ledger.searches} searches · ${ledger.sourcesRead} sources read · 0 tokens`,
      );
      expect(shown.stdout).toMatch(/iteration-1\/search-0 · completed · \d+ ms · attempt 1/);
      expect(shown.stdout).toMatch(/\[1\] Tidal energy/);
      const claims = quarry(['show', short, '--claims']);
      // Quoted, not verified (issue 42): an offline report makes no claim of its own to check.
      expect(claims.stdout).toMatch(
        /Claims of report version 1:\n {2}\(none: the report quotes its sources word for word/,
      );
      expect(claims.stdout).toMatch(/Research state:\n(.|\n)*sources read, about \d+ tokens/);
      expect(quarry(['rename', short, 'Tides and turbines']).stdout).toContain('Renamed');
      expect(quarry(['--json', 'ls']).stdout).toContain('"title":"Tides and turbines"');
      const markdown = quarry(['export', short, '--format', 'md']);
      expect(markdown.stdout).toContain('## Sources');
      const htmlFile = join(home, 'report.html');
      expect(quarry(['export', short, '--format', 'html', '-o', htmlFile]).code).toBe(0);
      expect(readFileSync(htmlFile, 'utf8')).toMatch(/^<!doctype html>[\s\S]*<h2>Sources<\/h2>/);
      // A PDF printed from the same page, with its citations.
      const pdfFile = join(home, 'report.pdf');
      const pdf = quarry(['export', short, '--format', 'pdf', '-o', pdfFile]);
      expect(pdf.code, pdf.stderr).toBe(0);
      const pdfText = execFileSync('pdftotext', [pdfFile, '-'], { encoding: 'utf8' });
      expect(pdfText).toContain('Sources');
      expect(pdfText).toMatch(/Tidal energy/);
      expect(pdfText).toMatch(/\[1\]/);
      const jsonFile = join(home, 'session.json');
      expect(quarry(['export', short, '--format', 'json', '-o', jsonFile]).code).toBe(0);
      const fork = quarry(['--json', 'fork', short, '--from', 'outline']);
      expect(fork.code, fork.stderr).toBe(0);
      const forkId = (JSON.parse(fork.stdout) as { sessionId: string }).sessionId;
      const resumedFork = quarry(['resume', forkId.slice(0, 8)]);
      expect(resumedFork.code, resumedFork.stderr).toBe(0);
      expect(resumedFork.stdout).toContain('## Sources');
      expect(quarry(['rm', short, forkId.slice(0, 8), '--yes']).code).toBe(0);
      expect(quarry(['show', short]).code).toBe(4);
      const imported = quarry(['import', jsonFile]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toContain(`Imported session ${id} (completed): Tides and turbines`);
      expect(quarry(['export', short, '--format', 'md']).stdout).toBe(markdown.stdout);
    });

    it('refuses bad input with clear errors and exit codes, and changes nothing', () => {
      const noSources = quarry(['run', QUESTION]);
      expect(noSources.code).toBe(2);
      expect(noSources.stderr).toContain('--docs <folder>');
      expect(quarry(['run', QUESTION, '--docs', docs, '--iterations', 'many']).stderr).toContain('--iterations');
      expect(quarry(['run', QUESTION, '--docs', docs, '--iterations', '0']).code).toBe(2);
      expect(quarry(['run', QUESTION, '--search', 'altavista']).code).toBe(2);
      expect(quarry(['run', QUESTION, '--docs', join(home, 'missing')]).code).toBe(2);
      expect(quarry(['show', 'ffffffff']).code).toBe(4);
      expect(quarry(['show', 'not an id!']).code).toBe(2);
      expect(quarry(['frobnicate']).code).toBe(2);
      expect(quarry(['ls', '--status', 'sleeping']).code).toBe(2);
      expect(quarry(['ls']).stdout).toContain('No sessions yet');
      const badFile = join(home, 'bad.json');
      writeFileSync(badFile, '{"format": "quarry-session", "version": 1, "session": {');
      const truncated = quarry(['import', badFile]);
      expect(truncated.code).toBe(2);
      expect(truncated.stderr).toContain('truncated');
      writeFileSync(badFile, JSON.stringify({ format: 'quarry-session', version: 9 }));
      expect(quarry(['import', badFile]).stderr).toContain('version');
      expect(quarry(['ls']).stdout).toContain('No sessions yet');
    });

    it('keeps a session whole whatever the input: long questions, missing folders (issue 34)', () => {
      // Longer than any search provider takes: searched shortened, kept whole.
      const long = `${QUESTION} ${'Consider the tides, the turbines, the barrages and the estuaries in detail. '.repeat(40)}`;
      const run = quarry(['--json', 'run', long, '--docs', docs]);
      expect(run.code, run.stderr).toBe(0);
      const id = idOf(run);
      const askedLong = quarry([
        'ask',
        id.slice(0, 8),
        `When did La Rance open? ${'And why there, of all places? '.repeat(80)}`,
      ]);
      expect(askedLong.code, askedLong.stderr).toBe(0);
      expect(JSON.parse(quarry(['--json', 'show', id]).stdout).session).toMatchObject({
        status: 'completed',
        question: long.trim(),
      });
      // Files and stores in folders that do not exist: a clear usage error, nothing made.
      const exported = quarry(['export', id.slice(0, 8), '-o', join(home, 'missing', 'report.md')]);
      expect(exported.code).toBe(2);
      expect(exported.stderr).toMatch(/does not exist/);
      expect(exported.stderr).not.toMatch(/\n\s+at /);
      if (backend === 'sqlite') {
        const elsewhere = quarry(['--db', join(home, 'nowhere', 'quarry.db'), 'ls']);
        expect(elsewhere.code).toBe(2);
        expect(elsewhere.stderr).toMatch(/does not exist/);
        expect(existsSync(join(home, 'nowhere'))).toBe(false);
      }
    });

    it('waits for an outline review (exit 3), takes the answer with ask, and refuses resuming a completed session (exit 5)', () => {
      const waiting = quarry(['run', QUESTION, '--docs', docs, '--review-outline']);
      expect(waiting.code).toBe(3);
      const id = /quarry ask ([0-9a-f]{8}) approve/.exec(waiting.stdout)![1]!;
      // The outline itself, numbered, never its JSON (issue 46).
      expect(waiting.stdout).toMatch(/The outline of ".+":\n\n1\. /);
      expect(waiting.stdout).not.toContain('"sections"');
      const shown = quarry(['show', id]).stdout;
      expect(shown).toMatch(/The outline of ".+":\n\n1\. /);
      expect(shown).not.toContain('"noteIds"');
      expect(quarry(['ls', '--status', 'waiting']).stdout).toContain(id);
      const approved = quarry(['ask', id, 'approve']);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain('## Sources');
      // The review is in the conversation: the outline asked about, then the answer.
      expect(quarry(['show', id]).stdout).toMatch(
        /assistant: Here is the outline of the report:[\s\S]*\n {2}user: approve\n/,
      );
      const again = quarry(['resume', id]);
      expect(again.code).toBe(5);
      expect(again.stderr).toContain('--force');
      const followUp = quarry(['ask', id, 'When did La Rance open?']);
      expect(followUp.code, followUp.stderr).toBe(0);
      expect(followUp.stdout).toContain('1966');
      // The first turn's steps are out of a rewind's reach now; the refusal says how to fork from them.
      const refused = quarry(['resume', id, '--from', 'outline']);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain(`quarry fork ${id} --turn 1 --from outline`);
      const branch = quarry(['fork', id, '--turn', '1', '--from', 'outline']);
      expect(branch.code, branch.stderr).toBe(0);
      const branchId = /quarry resume ([0-9a-f]{8})/.exec(branch.stdout)![1]!;
      // It starts again at the first report's outline: its review is asked again.
      expect(quarry(['resume', branchId]).code).toBe(3);
      // A turn that is not a number, a run the session does not have, a step that run lacks: refused, nothing forked.
      const before = quarry(['--json', 'ls']).stdout.trim().split('\n').length;
      expect(quarry(['fork', id, '--turn', '0']).stderr).toContain('Invalid --turn');
      expect(quarry(['fork', id, '--turn', '9']).code).toBe(4);
      const noStep = quarry(['fork', id, '--turn', '1', '--from', 'nothing']);
      expect(noStep.code).toBe(4);
      expect(noStep.stderr).toContain('No step or phase "nothing" in run 1.');
      expect(quarry(['--json', 'ls']).stdout.trim().split('\n')).toHaveLength(before);
      const asFirst = quarry(['fork', id, '--turn', '1']);
      expect(asFirst.stdout).toContain('as it stood after turn 1');
      const firstId = /quarry ask ([0-9a-f]{8})/.exec(asFirst.stdout)![1]!;
      expect(quarry(['show', firstId]).stdout).not.toContain('La Rance open');
    });

    it('moves an unfinished session through export and import, and resumes a legacy half-finished one', () => {
      const waiting = quarry(['run', QUESTION, '--docs', docs, '--review-outline']);
      const id = /quarry ask ([0-9a-f]{8}) approve/.exec(waiting.stdout)![1]!;
      const file = join(home, 'waiting.json');
      expect(quarry(['export', id, '--format', 'json', '-o', file]).code).toBe(0);
      expect(quarry(['rm', id, '--yes']).code).toBe(0);
      expect(quarry(['import', file]).stdout).toContain('(waiting)');
      const approved = quarry(['ask', id, 'approve']);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain('## Sources');

      const legacy = quarry(['import', join(root, 'test', 'fixtures', 'legacy', 'half-finished.json')]);
      expect(legacy.stdout).toContain('Imported session 20240611-141502-tidal (interrupted)');
      const resumed = quarry(['resume', '20240611', '--docs', docs]);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/step-start iteration-2\/search-0/);
      expect(resumed.stdout).not.toMatch(/step-start iteration-1\//);
      // What the legacy session had gathered before it stopped is cited in the report.
      expect(resumed.stdout).toContain('https://example.org/barrages');
      const exported = JSON.parse(quarry(['export', '20240611', '--format', 'legacy-json']).stdout) as {
        status: string;
        final_report: string;
      };
      expect(exported.status).toBe('completed');
      expect(exported.final_report).toContain('## Sources');

      // The persistence plan's own layout: summaries as strings, a web provider with no key here.
      const planned = quarry(['import', join(root, 'test', 'fixtures', 'legacy', 'persistence-plan.json')]);
      expect(planned.code, planned.stderr).toBe(0);
      expect(planned.stdout).toContain('jina');
      expect(planned.stdout).toContain('quarry resume 3f6c2a9e --docs <folder>');
      const carriedOn = quarry(['resume', '3f6c2a9e', '--docs', docs]);
      expect(carriedOn.code, carriedOn.stderr).toBe(0);
      expect(carriedOn.stdout).toMatch(/step-start iteration-2\/search-0/);
      const written = JSON.parse(quarry(['export', '3f6c2a9e', '--format', 'legacy-json']).stdout) as {
        aggregated_data: { aggregated_contexts: unknown[] };
      };
      expect(written.aggregated_data.aggregated_contexts.every((summary) => typeof summary === 'string')).toBe(true);
    });

    it('refuses a malformed config file and bad serve, worker and migrate-store flags, naming what is wrong', () => {
      writeFileSync(join(home, 'config.json'), '{"docs": ');
      const broken = quarry(['ls']);
      expect(broken.code).toBe(2);
      expect(broken.stderr).toContain(join(home, 'config.json'));
      writeFileSync(join(home, 'config.json'), JSON.stringify({ docs: 'not-a-list' }));
      expect(quarry(['ls']).stderr).toContain('docs');
      writeFileSync(join(home, 'config.json'), JSON.stringify({ docs: [docs] }));
      expect(quarry(['run', QUESTION]).code, 'config docs are the default').toBe(0);
      expect(quarry(['worker', '--concurrency', '0']).stderr).toContain('--concurrency');
      expect(quarry(['worker', '--lease-ttl', 'soon']).code).toBe(2);
      const badPort = quarry(['worker', '--metrics-port', '70000']);
      expect(badPort.code).toBe(2);
      expect(badPort.stderr).toContain('--metrics-port');
      expect(quarry(['serve', '--port', 'http']).stderr).toContain('--port');
      const migrate = quarry(['migrate-store', '--to', join(home, 'config.json', 'x.db')]);
      expect(migrate.code).toBe(1);
      expect(migrate.stderr).toContain('Cannot open the SQLite database');
      expect(quarry(['--json', 'ls']).stdout.trim().split('\n')).toHaveLength(1);
    });

    it('ambiguous prefixes list their candidates', () => {
      const file = (sessionId: string) => {
        const path = join(home, `${sessionId}.json`);
        writeFileSync(
          path,
          JSON.stringify({
            format: 'quarry-session',
            version: 1,
            session: {
              id: sessionId,
              title: 't',
              question: 'q',
              status: 'completed',
              settings: {},
              workflow: { name: 'research', version: 1 },
              error: null,
              createdAt: 1,
              updatedAt: 1,
            },
            messages: [],
            runs: [],
            steps: [],
            sources: [],
          }),
        );
        return path;
      };
      expect(quarry(['import', file('abc12345-one')]).code).toBe(0);
      expect(quarry(['import', file('abc99999-two')]).code).toBe(0);
      const ambiguous = quarry(['show', 'abc']);
      expect(ambiguous.code).toBe(2);
      expect(ambiguous.stderr).toContain('abc12345-one, abc99999-two');
      expect(quarry(['show', 'abc1']).code).toBe(0);
    });
  });
}

/** Ctrl-C during a run with a model, then resume: the same report (on the embedded store). */
export function describeInterruptedRun() {
  describe('quarry run interrupted with Ctrl-C', () => {
    let server: FakeOpenAiServer;
    let home: string;
    let docs: string;

    beforeEach(async () => {
      server = await new FakeOpenAiServer(schemaFakeModel()).start();
      home = mkdtempSync(join(tmpdir(), 'quarry-cli-int-'));
      docs = join(home, 'docs');
      cpSync(fixtures, docs, { recursive: true });
    });
    afterEach(async () => {
      await server.stop();
      rmSync(home, { recursive: true, force: true });
    });

    it('stops cleanly, prints the resume command, and resume ends with the same report', async () => {
      const env = {
        ...childEnv({ QUARRY_HOME: home }),
        ...fakeModelEnv(server.baseUrl),
      };
      const reference = await runAsync(['run', QUESTION, '--docs', docs, '--iterations', '1'], env);
      expect(reference.code, reference.stderr).toBe(0);
      const reportOf = (stdout: string) => stdout.slice(stdout.indexOf('\n# '), stdout.indexOf('\nSession '));
      const referenceReport = reportOf(reference.stdout);
      expect(referenceReport).toContain('## Sources');

      // Interrupted while it waits for its fourth model call.
      server.holdAfter(3);
      const child = spawn(process.execPath, [bin, 'run', QUESTION, '--docs', docs, '--iterations', '1'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      await server.waitUntilHeld();
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      server.release();
      const id = /quarry resume ([0-9a-f]{8})/.exec(stdout)?.[1];
      expect(id, stdout).toBeTruthy();
      const resumed = await runAsync(['resume', id!], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/run-start run 1, resuming at /);
      expect(reportOf(resumed.stdout)).toBe(referenceReport);
    });
  });
}
