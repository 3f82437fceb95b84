import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/serve.ts';
import { eventually, type StoreHarness, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { docxFile, zipBomb } from '../support/office-files.ts';
import { testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const tokens = { alice: 'alice-library-token', bob: 'bob-library-token' };

function describeLibrary(harness: StoreHarness, skipReason: string | null) {
  describe.skipIf(skipReason !== null)(`a library per user on ${harness.name} (issue 47)`, () => {
    let database: TestDatabase;
    let server: RunningServer;
    let home: string;
    const library = () => join(home, 'library');

    const call = (token: string, path: string, init: RequestInit = {}) =>
      fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
    const upload = (token: string, files: { name: string; bytes: Uint8Array | string }[]) => {
      const form = new FormData();
      for (const file of files) form.append('file', new Blob([file.bytes as BlobPart]), file.name);
      return call(token, '/api/documents', { method: 'POST', body: form });
    };
    const research = async (token: string, question: string, docs?: string[]) => {
      const created = await call(token, '/api/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question, ...(docs ? { docs } : {}) }),
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const { id } = (await created.json()) as { id: string };
      let detail: { status: string; report: { latest: string | null } } = { status: '', report: { latest: null } };
      await eventually(async () => {
        detail = await (await call(token, `/api/sessions/${id}`)).json();
        return ['completed', 'failed'].includes(detail.status);
      }, 60_000);
      expect(detail.status).toBe('completed');
      return detail.report.latest ?? '';
    };

    beforeAll(async () => {
      database = await harness.create();
      home = mkdtempSync(join(tmpdir(), 'quarry-library-'));
      cpSync(fixtures, join(home, 'docs'), { recursive: true });
      for (const name of ['alice', 'bob'] as const) {
        const user = await database.store.createUser({ name });
        await database.store.addApiToken({
          userId: user.id,
          tokenHash: createHash('sha256').update(tokens[name]).digest('hex'),
        });
      }
      server = await startServer({
        store: database.store,
        config: testConfig({
          QUARRY_DOCS: join(home, 'docs'),
          QUARRY_LIBRARY: library(),
          QUARRY_PORT: '0',
        }),
        runner: true,
        log: () => undefined,
      });
    });
    afterAll(async () => {
      await server?.close();
      await database?.destroy();
      rmSync(home, { recursive: true, force: true });
    });

    it('adds a file, researches it alone, keeps it from everyone else, and forgets it when removed', {
      timeout: within(120_000),
    }, async () => {
      const added = await upload(tokens.alice, [
        {
          name: 'lock-gates.docx',
          bytes: docxFile({
            title: 'Lock gates of Granville',
            heading: 'Opening times',
            paragraphs: ['The lock gate at Granville opens two hours either side of high water.'],
          }),
        },
      ]);
      expect(added.status, await added.clone().text()).toBe(201);
      const [document] = ((await added.json()) as { documents: { id: string; title: string; kind: string }[] })
        .documents;
      expect(document).toMatchObject({ title: 'Lock gates of Granville', kind: 'docx' });
      const listed = await (await call(tokens.alice, '/api/documents')).json();
      expect(listed.documents.map((each: { id: string }) => each.id)).toEqual([document!.id]);
      // The library is one of the folders Alice may choose, and a research can be limited to the file.
      const capabilities = await (await call(tokens.alice, '/api/capabilities')).json();
      expect(capabilities.documentFolders.map((folder: { name: string }) => folder.name)).toContain('library');
      const report = await research(tokens.alice, 'When does the lock gate at Granville open?', [
        `library/${document!.id}`,
      ]);
      expect(report).toContain('The lock gate at Granville opens two hours either side of high water.');
      expect(report).toMatch(/Lock gates of Granville/);

      // Bob sees none of it: not in his list, not as a folder, not by name, not in a research of everything.
      expect((await (await call(tokens.bob, '/api/documents')).json()).documents).toEqual([]);
      const bobCapabilities = await (await call(tokens.bob, '/api/capabilities')).json();
      expect(bobCapabilities.documentFolders.map((folder: { name: string }) => folder.name)).not.toContain('library');
      const forbidden = await call(tokens.bob, '/api/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'Granville lock gate?', docs: [`library/${document!.id}`] }),
      });
      expect(forbidden.status).toBe(403);
      const aliceFolder = readdirSync(library())[0]!;
      const byPath = await call(tokens.bob, '/api/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'Granville lock gate?', docs: [join(library(), aliceFolder)] }),
      });
      expect(byPath.status).toBe(403);
      expect((await call(tokens.bob, `/api/documents/${document!.id}`, { method: 'DELETE' })).status).toBe(404);
      const bobReport = await research(tokens.bob, 'When does the lock gate at Granville open?');
      expect(bobReport).not.toContain('Granville opens two hours');

      // Removed: gone from the list, the disk and the index.
      expect((await call(tokens.alice, `/api/documents/${document!.id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await (await call(tokens.alice, '/api/documents')).json()).documents).toEqual([]);
      expect(existsSync(join(library(), aliceFolder, document!.id))).toBe(false);
      expect(
        (await database.store.listDocuments({ pathPrefix: join(home, 'library') })).filter((each) =>
          each.path.includes(document!.id),
        ),
      ).toEqual([]);
    });

    it('refuses a file it cannot read with the reason, and keeps nothing of a refused request', {
      timeout: within(60_000),
    }, async () => {
      const before = await database.store.listDocuments({ pathPrefix: join(home, 'library') });
      const cases = [
        { files: [{ name: 'setup.exe', bytes: 'MZ' }], status: 415, message: /setup\.exe: the library reads/ },
        // A good file beside a zip bomb: all or nothing.
        {
          files: [
            { name: 'notes.md', bytes: '# Notes\n\nNeap tides are small.\n' },
            { name: 'bomb.docx', bytes: zipBomb() },
          ],
          status: 400,
          message: /bomb\.docx cannot be read: .*zip bomb/,
        },
        { files: [{ name: '.hidden.md', bytes: 'x' }], status: 400, message: /not a file name/ },
        { files: [], status: 400, message: /no file was sent/ },
      ];
      for (const { files, status, message } of cases) {
        const response = await upload(tokens.alice, files);
        expect(response.status, files.map((file) => file.name).join()).toBe(status);
        expect((await response.json()).error.message).toMatch(message);
      }
      const json = await call(tokens.alice, '/api/documents', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"file":"x"}',
      });
      expect(json.status).toBe(415);
      expect((await (await call(tokens.alice, '/api/documents')).json()).documents).toEqual([]);
      expect(await database.store.listDocuments({ pathPrefix: join(home, 'library') })).toEqual(before);
      // A refused first upload leaves no library behind: Bob still has no library folder.
      expect((await upload(tokens.bob, [{ name: 'bomb.docx', bytes: zipBomb() }])).status).toBe(400);
      const folders = (await (await call(tokens.bob, '/api/capabilities')).json()).documentFolders;
      expect(folders.map((folder: { name: string }) => folder.name)).not.toContain('library');
    });
  });
}

describeLibrary(sqliteHarness, null);
describeLibrary(postgresHarness, postgresSkipReason());

it('keeps libraries out of a document folder everyone searches: refused at start, or hidden and refused by name', async () => {
  const database = await sqliteHarness.create();
  const docs = mkdtempSync(join(tmpdir(), 'quarry-library-overlap-'));
  let server: RunningServer | undefined;
  try {
    const start = (library: string) =>
      startServer({
        store: database.store,
        config: testConfig({ QUARRY_DOCS: docs, QUARRY_LIBRARY: library, QUARRY_PORT: '0' }),
        runner: false,
        log: () => undefined,
      });
    for (const library of [join(docs, 'library'), docs, dirname(docs)])
      await expect(start(library)).rejects.toThrow(/overlap: users' libraries would be searched by everyone/);
    // Under a hidden folder (QUARRY_HOME=~/.quarry with --docs ~): indexing never walks it, and a
    // request naming another user's library by its path is refused.
    const libraries = join(docs, '.quarry', 'library');
    const alice = await database.store.createUser({ name: 'alice' });
    mkdirSync(join(libraries, alice.id, 'a1b2c3d4e5f6'), { recursive: true });
    writeFileSync(join(libraries, alice.id, 'a1b2c3d4e5f6', 'secret.md'), '# Secret\n\nAlice only.\n');
    const bob = await database.store.createUser({ name: 'bob' });
    await database.store.addApiToken({
      userId: bob.id,
      tokenHash: createHash('sha256').update('bob-overlap').digest('hex'),
    });
    server = await start(libraries);
    const create = (docsField: string[]) =>
      fetch(`${server!.url}/api/sessions`, {
        method: 'POST',
        headers: { authorization: 'Bearer bob-overlap', 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'What is secret?', docs: docsField, start: false }),
      });
    for (const named of [join(libraries, alice.id), join(libraries, alice.id, 'a1b2c3d4e5f6'), libraries])
      expect((await create([named])).status, named).toBe(403);
    expect((await create([docs])).status).toBe(201);
  } finally {
    await server?.close();
    await database.destroy();
    rmSync(docs, { recursive: true, force: true });
  }
});
