import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import type { TestDatabase } from './harness.ts';

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

type PassageSpec = string | { text: string; headings?: string; linkDensity?: number };

function document(path: string, title: string, passages: PassageSpec[], navigation = false) {
  let offset = 0;
  const texts = passages.map((spec) => (typeof spec === 'string' ? spec : spec.text));
  return {
    path,
    title,
    kind: 'markdown',
    size: texts.join('\n\n').length,
    mtimeMs: 1_700_000_000_000,
    contentHash: hash(texts.join('')),
    chars: texts.join('\n\n').length,
    navigation,
    passages: passages.map((spec) => {
      const { text, headings = '', linkDensity = 0 } = typeof spec === 'string' ? { text: spec } : spec;
      const passage = { start: offset, end: offset + text.length, text, headings, linkDensity };
      offset += text.length + 2;
      return passage;
    }),
  };
}

export function corpusCases(use: () => TestDatabase): void {
  it('indexes documents and ranks the passage that answers a question first', async () => {
    const { store } = use();
    await store.upsertDocument(
      document('/docs/energy/solar.md', 'Solar power', [
        'Photovoltaic panels convert sunlight into electricity with efficiencies around twenty percent.',
        'Installation costs fell sharply during the last decade.',
      ]),
    );
    await store.upsertDocument(
      document('/docs/energy/wind.md', 'Wind power', [
        'Wind turbines convert the kinetic energy of moving air into electricity.',
      ]),
    );
    await store.upsertDocument(
      document('/docs/food/bread.md', 'Baking bread', ['Yeast ferments sugars and the dough rises before baking.']),
    );
    const hits = await store.searchPassages({ query: 'How efficient are photovoltaic panels?' });
    expect(hits[0]).toMatchObject({ path: '/docs/energy/solar.md', title: 'Solar power', position: 0 });
    expect(hits[0]!.text).toContain('twenty percent');
    expect(hits[0]!.score).toBeGreaterThan(hits.at(-1)!.score - 1e-9);
    const scoped = await store.searchPassages({ query: 'electricity', pathPrefixes: ['/docs/energy/wind'] });
    expect(scoped.map((hit) => hit.path)).toEqual(['/docs/energy/wind.md']);
    expect(await store.searchPassages({ query: 'the of and' })).toEqual([]);
    expect(await store.searchPassages({ query: '" OR NEAR( * -' })).toEqual([]);
  });

  it('finds symbols as typed ($@, .PHONY, an address) and the one word a text writes for two (issue 42)', async () => {
    const { store } = use();
    await store.upsertDocument(
      document('/docs/make/rules.md', 'Automatic variables', [
        'In a rule, $@ is the name of the target and $< the name of the first prerequisite.',
        'Declare clean as .PHONY so make always runs it.',
      ]),
    );
    await store.upsertDocument(
      document('/docs/make/variables.md', 'Variables', [
        'A variable names a piece of text in a makefile, such as the name of the target of a rule.',
      ]),
    );
    await store.upsertDocument(
      document('/docs/network.md', 'Network', [
        'Give the interface the address 192.168.1.1 with a /24 mask.',
        'Set the timezone with dpkg-reconfigure.',
        'A time server keeps the clock right; each zone of the network has one.',
      ]),
    );
    expect((await store.searchPassages({ query: '$@' }))[0]).toMatchObject({
      path: '/docs/make/rules.md',
      position: 0,
    });
    expect((await store.searchPassages({ query: 'What does $< mean in a rule?' }))[0]).toMatchObject({
      path: '/docs/make/rules.md',
      position: 0,
    });
    expect((await store.searchPassages({ query: '.PHONY' }))[0]).toMatchObject({ position: 1 });
    expect((await store.searchPassages({ query: '192.168.1.1' }))[0]).toMatchObject({ path: '/docs/network.md' });
    expect((await store.searchPassages({ query: 'change the time zone' }))[0]).toMatchObject({
      path: '/docs/network.md',
      position: 1,
    });
  });

  it("finds the manual's word for the question's (remove for delete, directory for folder), counted once (issue 42)", async () => {
    const { store } = use();
    await store.upsertDocument(
      document('/docs/clean.md', 'clean', ['Remove untracked files from the working tree, directory by directory.']),
    );
    await store.upsertDocument(
      document('/docs/status.md', 'status', ['Untracked files are shown by status; files deleted stay listed.']),
    );
    const hits = await store.searchPassages({ query: 'delete untracked files in a folder' });
    expect(hits.map((hit) => hit.path)).toEqual(['/docs/clean.md', '/docs/status.md']);
    // The manual's word stands for the question's: the same passage with either scores the same (a
    // synonym counted as a word of its own as well would score more).
    await store.upsertDocument(document('/docs/one.md', 'one', ['Delete stale caches from a spool.']));
    await store.upsertDocument(document('/docs/other.md', 'other', ['Remove stale caches from a spool.']));
    const scores = new Map(
      (await store.searchPassages({ query: 'delete stale caches spool' })).map((hit) => [hit.path, hit.score]),
    );
    expect(scores.get('/docs/other.md')).toBeCloseTo(scores.get('/docs/one.md')!, 6);
  });

  it('reads passages of a document by its path and positions, and nothing for a path it does not hold', async () => {
    const { store } = use();
    await store.upsertDocument(document('/docs/a.md', 'A', ['First.', 'Second.', 'Third.']));
    await store.upsertDocument(document('/private/b.md', 'B', ['Secret.']));
    const read = await store.readPassages({ path: '/docs/a.md', positions: [2, 0, 7] });
    expect(read.map((passage) => [passage.position, passage.text])).toEqual([
      [0, 'First.'],
      [2, 'Third.'],
    ]);
    expect(await store.readPassages({ path: '/docs/b.md', positions: [0] })).toEqual([]);
    expect(await store.readPassages({ path: '/docs/a.md', positions: [] })).toEqual([]);
  });

  it('weighs a word found in most passages below a rare one, however the words were counted', async () => {
    const { store } = use();
    // "zorbat" is in nine passages of ten, "quilnex" in one: the rare word decides.
    await store.upsertDocument(
      document('/notes/many.md', 'Field notes', ['zorbat zorbat zorbat zorbat, the notes say again and again.']),
    );
    for (let index = 0; index < 8; index++)
      await store.upsertDocument(document(`/notes/other-${index}.md`, `Notes ${index}`, [`A zorbat, page ${index}.`]));
    await store.upsertDocument(document('/notes/rare.md', 'Rare notes', ['One quilnex, seen once in the field.']));
    const first = async (query: string) => (await store.searchPassages({ query }))[0]?.path;
    // Both words counted together…
    expect(await first('zorbat quilnex')).toBe('/notes/rare.md');
    // …and one counted now, the other remembered from an earlier search.
    expect(await first('quilnex')).toBe('/notes/rare.md');
    expect(await first('zorbat')).toBe('/notes/many.md');
    expect(await first('quilnex field zorbat')).toBe('/notes/rare.md');
  });

  it('counts a stop word the query and a passage write as code, and only then', async () => {
    const { store } = use();
    await store.upsertDocument(
      document('/docs/compound.md', 'Compound statements', [
        'A statement ends at a newline; a compound statement holds other statements, statement by statement.',
        'The `with` statement wraps a block in a context manager.',
      ]),
    );
    await store.upsertDocument(
      document('/docs/simple.md', 'Simple statements', ['An expression statement evaluates with no other effect.']),
    );
    const paths = async (query: string) =>
      (await store.searchPassages({ query })).map((hit) => `${hit.path}#${hit.position}`);
    // Written as code in the query, "with" is a word to find; elsewhere it is a stop word.
    expect((await paths('the `with` statement'))[0]).toBe('/docs/compound.md#1');
    expect((await paths('the with statement'))[0]).toBe('/docs/compound.md#0');
  });

  it('weighs title and headings above body text, and ranks link lists and navigation pages below prose', async () => {
    const { store } = use();
    await store.upsertDocument(
      document('/docs/guide.md', 'Cooking guide', [
        { text: 'Many recipes mention sourdough in passing, among other breads.', headings: 'Overview' },
      ]),
    );
    await store.upsertDocument(
      document('/docs/sourdough.md', 'Sourdough', [
        { text: 'A starter of flour and water ferments for days before it leavens the dough.', headings: 'Starter' },
      ]),
    );
    await store.upsertDocument(
      document(
        '/docs/index.md',
        'Index of breads',
        [{ text: 'Sourdough, sourdough starter, sourdough bread, rye sourdough', linkDensity: 0.95 }],
        true,
      ),
    );
    const hits = await store.searchPassages({ query: 'sourdough' });
    expect(hits.map((hit) => hit.path)).toEqual(['/docs/sourdough.md', '/docs/guide.md', '/docs/index.md']);
    expect(hits[0]).toMatchObject({ headings: 'Starter', linkDensity: 0, navigation: false });
    expect(hits[2]).toMatchObject({ navigation: true, linkDensity: 0.95 });
    expect((await store.listDocuments({ pathPrefix: '/docs/index' }))[0]!.navigation).toBe(true);
    const byHeading = await store.searchPassages({ query: 'overview of breads' });
    expect(byHeading[0]!.path).toBe('/docs/guide.md');
  });

  it('replaces a document on re-index, touches and removes documents', async () => {
    const { store } = use();
    await store.upsertDocument(document('/docs/a.md', 'A', ['The old wording mentions turbines.']));
    await store.upsertDocument(document('/docs/a.md', 'A', ['The new wording mentions batteries.']));
    expect(await store.searchPassages({ query: 'turbines' })).toEqual([]);
    expect((await store.searchPassages({ query: 'batteries' })).map((hit) => hit.path)).toEqual(['/docs/a.md']);
    await store.touchDocument({ path: '/docs/a.md', mtimeMs: 1_800_000_000_000, size: 99 });
    expect((await store.listDocuments({ pathPrefix: '/docs/' }))[0]).toMatchObject({
      mtimeMs: 1_800_000_000_000,
      size: 99,
    });
    expect(await store.removeDocuments(['/docs/a.md', '/docs/missing.md'])).toBe(1);
    expect(await store.searchPassages({ query: 'batteries' })).toEqual([]);
    expect(await store.listDocuments()).toEqual([]);
  });
}
