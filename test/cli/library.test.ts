import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { zipBomb } from '../support/office-files.ts';

const bin = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'quarry');
const home = mkdtempSync(join(tmpdir(), 'quarry-docs-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

it('quarry docs add|ls|rm: the local user’s library, searched by default, all or nothing (issue 47)', {
  timeout: within(60_000),
}, () => {
  const quarry = (args: string[]) =>
    spawnSync(process.execPath, [bin, ...args], {
      env: childEnv({ QUARRY_HOME: home }),
      encoding: 'utf8',
      timeout: within(30_000),
    });
  const notes = join(home, 'granville.md');
  writeFileSync(notes, '# Lock gates\n\nThe lock gate at Granville opens two hours either side of high water.\n');
  const bomb = join(home, 'bomb.docx');
  writeFileSync(bomb, zipBomb());

  // A file Quarry cannot read refuses the whole command: nothing is added.
  const refused = quarry(['docs', 'add', notes, bomb]);
  expect(refused.status).toBe(2);
  expect(refused.stderr).toMatch(/bomb\.docx cannot be read: .*zip bomb/);
  expect(JSON.parse(quarry(['--json', 'docs', 'ls']).stdout).documents).toEqual([]);
  const unsupported = quarry(['docs', 'add', join(home, 'missing.exe')]);
  expect(unsupported.status).toBe(2);

  const added = quarry(['docs', 'add', notes]);
  expect(added.status, added.stderr).toBe(0);
  const id = /as library\/([a-f0-9]+): Lock gates/.exec(added.stdout)?.[1];
  expect(id, added.stdout).toBeDefined();
  expect(quarry(['docs', 'ls']).stdout).toMatch(new RegExp(`library/${id}\\s+granville\\.md\\s+\\d+ KB\\s+Lock gates`));

  // Searched by default, and by name alone.
  for (const args of [[], ['--docs', `library/${id}`]]) {
    const run = quarry(['run', 'When does the lock gate at Granville open?', ...args]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('> The lock gate at Granville opens two hours either side of high water.');
  }

  const removed = quarry(['docs', 'rm', `library/${id}`]);
  expect(removed.status, removed.stderr).toBe(0);
  expect(quarry(['docs', 'rm', id!]).status).toBe(4);
  const after = quarry(['run', 'When does the lock gate at Granville open?']);
  expect(after.stdout).not.toContain('opens two hours either side');
});
