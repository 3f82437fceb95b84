import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { within } from '../support/bounds.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'quarry');
const fixtures = join(root, 'test', 'fixtures', 'corpus');
const asRoot = process.getuid?.() === 0;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** True when this machine lets the test mount a small tmpfs of its own (root on Linux). */
function canMount(): boolean {
  if (!asRoot) return false;
  const probe = mkdtempSync(join(tmpdir(), 'quarry-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** The faults a store's file meets on an operator's machine: read-only, damaged, a full disk (issue 16). */
describe('the SQLite store under faults, through the real executable', () => {
  let home: string;
  let docs: string;

  function quarry(args: string[], options: { home?: string; user?: string } = {}): Result {
    const env = { PATH: process.env.PATH, HOME: tmpdir(), QUARRY_HOME: options.home ?? home };
    const command = options.user ? 'runuser' : process.execPath;
    const argv = options.user
      ? [
          '-u',
          options.user,
          '--',
          'env',
          ...Object.entries(env).map(([key, value]) => `${key}=${value}`),
          process.execPath,
          bin,
          ...args,
        ]
      : [bin, ...args];
    const result = spawnSync(command, argv, { env, encoding: 'utf8', timeout: within(60_000) });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  const noStackTrace = (result: Result) => expect(result.stderr).not.toMatch(/\n\s+at /);

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'quarry-faults-'));
    docs = join(home, 'docs');
    cpSync(fixtures, docs, { recursive: true });
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it('lists, shows and exports a store it cannot write, and refuses changes in words', () => {
    const store = join(home, 'shared');
    const run = quarry(['--json', 'run', 'How do tides work?', '--docs', docs], { home: store });
    expect(run.code, run.stderr).toBe(0);
    const id = (JSON.parse(run.stdout.split('\n')[0]!) as { sessionId: string }).sessionId.slice(0, 8);
    // Quarry's own folder and store are its user's alone (issue 34)…
    expect(statSync(store).mode & 0o777).toBe(0o700);
    expect(statSync(join(store, 'quarry.db')).mode & 0o777).toBe(0o600);
    // …until an operator shares them: another user (or this one, without root) reading a folder it
    // cannot write.
    chmodSync(home, 0o755);
    for (const file of readdirSync(store)) chmodSync(join(store, file), 0o644);
    chmodSync(store, 0o555);
    const reader = asRoot ? { home: store, user: 'nobody' } : { home: store };
    try {
      const listed = quarry(['ls'], reader);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(id);
      const shown = quarry(['show', id], reader);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain('## Sources');
      expect(quarry(['export', id, '--format', 'md'], reader).code).toBe(0);
      const renamed = quarry(['rename', id, 'Renamed'], reader);
      expect(renamed.code).toBe(1);
      expect(renamed.stderr).toMatch(/is read-only .*listed, shown and exported, not changed/);
      noStackTrace(renamed);
    } finally {
      chmodSync(store, 0o755);
    }
    expect(quarry(['ls'], { home: store }).stdout).not.toContain('Renamed');
  });

  it('reports a damaged store as damaged, with the integrity check’s words', () => {
    const run = quarry(['--json', 'run', 'How do tides work?', '--docs', docs]);
    expect(run.code, run.stderr).toBe(0);
    const id = (JSON.parse(run.stdout.split('\n')[0]!) as { sessionId: string }).sessionId.slice(0, 8);
    const file = join(home, 'quarry.db');
    // Pages past the schema are overwritten: the tables' own pages, not the file's header.
    const handle = openSync(file, 'r+');
    writeSync(handle, Buffer.alloc(8192, 0xff), 0, 8192, 4096 * 3);
    const shown = quarry(['show', id]);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toMatch(/The store at .* is damaged: the integrity check reports: /);
    noStackTrace(shown);

    const notADatabase = join(home, 'other');
    mkdirSync(notADatabase);
    writeFileSync(join(notADatabase, 'quarry.db'), 'these are not the bytes of a database, not at all\n'.repeat(100));
    const listed = quarry(['ls'], { home: notADatabase });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain('is damaged: the file is not a SQLite database');
    noStackTrace(listed);
  });

  it('exports what a journal with damaged payloads still holds, names the damage, and says how to redo it', () => {
    const run = quarry(['--json', 'run', 'How do tides work?', '--docs', docs]);
    expect(run.code, run.stderr).toBe(0);
    const id = (JSON.parse(run.stdout.split('\n')[0]!) as { sessionId: string }).sessionId;
    // One payload no longer parses, one blob is gone: damage a disk or a hand edit leaves behind.
    const db = new BetterSqlite3(join(home, 'quarry.db'));
    db.prepare("UPDATE steps SET output = '{\"queries\": [' WHERE key = 'plan'").run();
    const gone = 'ab'.repeat(32);
    db.prepare("UPDATE steps SET output = NULL, output_blob = ? WHERE key = 'iteration-1/search-0'").run(gone);
    db.close();

    const exported = quarry(['export', id, '--format', 'json', '-o', join(home, 'session.json')]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/could not read back 2 part/);
    expect(exported.stderr).toMatch(/step plan: its output: it does not parse as JSON/);
    expect(exported.stderr).toContain('step iteration-1/search-0: its output: its blob abababababab… is missing');
    noStackTrace(exported);
    expect(quarry(['export', id, '--format', 'md']).stdout).toContain('## Sources');
    expect(quarry(['show', id]).code).toBe(0);

    // A resume that must replay the damaged step stops there, naming it and the way out…
    const replay = quarry(['resume', id, '--from', 'outline']);
    expect(replay.code).not.toBe(0);
    expect(replay.stderr).toMatch(/step "plan" is damaged in the store .* --from plan/);
    noStackTrace(replay);
    // …which works: redoing from it records the step again.
    const redone = quarry(['resume', id, '--from', 'plan']);
    expect(redone.code, redone.stderr).toBe(0);
    expect(quarry(['export', id, '--format', 'json']).stderr).not.toMatch(/could not read back/);

    // The file imports elsewhere with the damaged steps to be run again, not replayed as nothing.
    const elsewhere = join(home, 'elsewhere');
    const imported = quarry(['--json', 'import', join(home, 'session.json')], { home: elsewhere });
    expect(imported.code, imported.stderr).toBe(0);
    const importedId = (JSON.parse(imported.stdout) as { id: string }).id;
    const file = JSON.parse(quarry(['export', importedId, '--format', 'json'], { home: elsewhere }).stdout) as {
      steps: { key: string; status: string; error: { code: string } | null }[];
    };
    const plan = file.steps.find((step) => step.key === 'plan');
    expect(plan).toMatchObject({ status: 'failed', error: { code: 'STORE_CORRUPT' } });
  });

  it('shows and exports a journal with a damaged page of its steps: the rows that read, and which do not (issue 45)', () => {
    const run = quarry(['--json', 'run', 'How do tides work?', '--docs', docs]);
    expect(run.code, run.stderr).toBe(0);
    const id = (JSON.parse(run.stdout.split('\n')[0]!) as { sessionId: string }).sessionId;
    // A leaf page of the steps table overwritten, as a bad sector or a torn write leaves it.
    const file = join(home, 'quarry.db');
    const db = new BetterSqlite3(file);
    const leaves = db
      .prepare("SELECT pageno FROM dbstat WHERE name = 'steps' AND pagetype = 'leaf' ORDER BY pageno")
      .all() as { pageno: number }[];
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const total = (db.prepare('SELECT COUNT(*) AS n FROM steps').get() as { n: number }).n;
    db.close();
    expect(leaves.length).toBeGreaterThan(1);
    const handle = openSync(file, 'r+');
    writeSync(handle, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (leaves[0]!.pageno - 1) * pageSize);
    closeSync(handle);

    const steps = quarry(['show', id.slice(0, 8), '--steps']);
    expect(steps.code, steps.stderr).toBe(0);
    expect(steps.stdout).toContain('· completed ·');
    expect(steps.stdout).toContain('· failed ·');
    const exported = quarry(['export', id, '--format', 'json', '-o', join(home, 'session.json')]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/could not read back \d+ part/);
    expect(exported.stderr).toMatch(/its row: it is on a damaged page of the store/);
    noStackTrace(exported);
    const written = JSON.parse(readFileSync(join(home, 'session.json'), 'utf8')) as {
      steps: { key: string; status: string; error: { code: string } | null }[];
    };
    const unreadable = written.steps.filter((step) => step.error?.code === 'STORE_CORRUPT');
    const readable = written.steps.filter((step) => step.status === 'completed');
    expect(unreadable.length).toBeGreaterThan(0);
    expect(readable.length).toBeGreaterThan(0);
    expect(unreadable.length + readable.length).toBe(total);
    // The file imports elsewhere, the unreadable steps to be run again.
    const imported = quarry(['--json', 'import', join(home, 'session.json')], { home: join(home, 'elsewhere') });
    expect(imported.code, imported.stderr).toBe(0);
  });

  it.skipIf(!canMount())(
    'lists, shows and exports a store on a read-only mount, and refuses changes in words (needs root to mount; issue 45)',
    () => {
      const mountPoint = join(home, 'mounted');
      mkdirSync(mountPoint);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint]);
      try {
        const store = join(mountPoint, 'home');
        const run = quarry(['--json', 'run', 'How do tides work?', '--docs', docs], { home: store });
        expect(run.code, run.stderr).toBe(0);
        const id = (JSON.parse(run.stdout.split('\n')[0]!) as { sessionId: string }).sessionId.slice(0, 8);
        execFileSync('mount', ['-o', 'remount,ro', mountPoint]);
        // Root is not stopped by file modes, but a read-only mount stops everyone.
        const listed = quarry(['ls'], { home: store });
        expect(listed.code, listed.stderr).toBe(0);
        expect(listed.stdout).toContain(id);
        const shown = quarry(['show', id], { home: store });
        expect(shown.code, shown.stderr).toBe(0);
        expect(shown.stdout).toContain('## Sources');
        const exported = quarry(['export', id, '--format', 'json'], { home: store });
        expect(exported.code, exported.stderr).toBe(0);
        expect(JSON.parse(exported.stdout).steps.length).toBeGreaterThan(5);
        const renamed = quarry(['rename', id, 'Renamed'], { home: store });
        expect(renamed.code).toBe(1);
        expect(renamed.stderr).toMatch(/is read-only .*listed, shown and exported, not changed/);
        noStackTrace(renamed);
      } finally {
        execFileSync('umount', [mountPoint]);
      }
    },
  );

  it.skipIf(!canMount())(
    'stops clearly on a full disk and resumes once there is room again (needs root to mount)',
    () => {
      const disk = join(home, 'disk');
      mkdirSync(disk);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', disk]);
      try {
        const store = join(disk, 'home');
        expect(quarry(['index', docs], { home: store }).code).toBe(0);
        // Leave room to create the session and record a few steps, not the whole run.
        const free = Number(execFileSync('df', ['-k', '--output=avail', disk], { encoding: 'utf8' }).split('\n')[1]);
        execFileSync('dd', ['if=/dev/zero', `of=${join(disk, 'filler')}`, 'bs=1k', `count=${free - 300}`], {
          stdio: 'ignore',
        });
        const full = quarry(['run', 'How do tides work?', '--docs', docs], { home: store });
        expect(full.code).toBe(1);
        expect(full.stderr).toContain('the disk is full');
        noStackTrace(full);
        const id = /quarry resume ([0-9a-f]{8})/.exec(full.stderr)?.[1];
        expect(id, full.stderr).toBeDefined();
        rmSync(join(disk, 'filler'));
        // The process that held it is gone: the resume takes it over at once and finishes it.
        const resumed = quarry(['resume', id!], { home: store });
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(resumed.stdout).toContain('## Sources');
        expect(quarry(['ls', '--status', 'completed'], { home: store }).stdout).toContain(id);
      } finally {
        execFileSync('umount', [disk]);
      }
    },
  );
});
