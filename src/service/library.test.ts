import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../test/support/test-config.ts';
import type { TestDatabase } from '../store/conformance/harness.ts';
import { sqliteHarness } from '../store/sqlite/sqlite-harness.ts';
import { addToLibrary, incomingFolder, listLibrary } from './library.ts';

describe('a library’s size limit (issue 47)', () => {
  let database: TestDatabase;
  let library: string;
  beforeEach(async () => {
    database = await sqliteHarness.create();
    library = mkdtempSync(join(tmpdir(), 'quarry-library-limit-'));
  });
  afterEach(async () => {
    await database.destroy();
    rmSync(library, { recursive: true, force: true });
  });

  it('counts what is kept, not the files on their way in, and refuses what would not fit', async () => {
    const base = testConfig({ QUARRY_LIBRARY: library });
    const config = {
      ...base,
      server: { ...base.server, limits: { ...base.server.limits, libraryBytes: 1024 * 1024 } },
    };
    const services = { corpus: database.store, config };
    const file = async (name: string, kilobytes: number) => {
      const path = join(await incomingFolder(config, 'alice'), name);
      const paragraph = 'The tide turns twice a day along the coast of Brittany.\n\n';
      writeFileSync(path, `# ${name}\n\n${paragraph.repeat(Math.ceil((kilobytes * 1024) / paragraph.length))}`);
      return { name, path, size: (kilobytes + 1) * 1024 };
    };
    // 700 KB into an empty 1 MB library: it fits (the file on its way in is not counted twice).
    expect(await addToLibrary(services, 'alice', [await file('first.md', 700)])).toHaveLength(1);
    await expect(addToLibrary(services, 'alice', [await file('second.md', 700)])).rejects.toThrow(
      /Your library holds 0\.7 MB of 1\.0 MB; these files \(0\.7 MB\) do not fit/,
    );
    expect((await listLibrary(services, 'alice')).map((document) => document.name)).toEqual(['first.md']);
  });
  it('says so when QUARRY_LIBRARY names a file, and keeps nothing', async () => {
    const file = join(library, 'not-a-folder');
    writeFileSync(file, 'x');
    await expect(incomingFolder({ library: file }, 'alice')).rejects.toThrow(
      /QUARRY_LIBRARY: .*not-a-folder cannot hold the library \(ENOTDIR\)/,
    );
    expect(
      await listLibrary({ corpus: database.store, config: testConfig({ QUARRY_LIBRARY: file }) }, 'alice'),
    ).toEqual([]);
  });
});
