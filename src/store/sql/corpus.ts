import { compoundPairs, queryTerms, stem, symbolTerms, synonymsOf } from '../../shared/terms.ts';
import type { CorpusDocument, PassageHit, SearchPassagesInput, UpsertDocumentInput } from '../store.ts';
import { escapeLike } from './codec.ts';
import type { SqlContext } from './context.ts';
import { candidate, rankCandidates } from './rank-candidates.ts';
import type { SqlExecutor } from './sql-driver.ts';

type Row = Record<string, unknown>;

function toDocument(row: Row): CorpusDocument {
  return {
    id: Number(row.id),
    path: String(row.path),
    title: String(row.title),
    kind: String(row.kind),
    size: Number(row.size),
    mtimeMs: Number(row.mtime_ms),
    contentHash: String(row.content_hash),
    chars: Number(row.chars),
    navigation: Number(row.navigation) === 1,
    indexedAt: Number(row.indexed_at),
    sketched: Number(row.sketched) === 1,
    duplicateOf: (row.duplicate_of as string | null) ?? null,
    error: (row.error as string | null) ?? null,
    readerVersion: Number(row.reader_version ?? 0),
  };
}

/** Every column of a document but its sketch (which can be large), and whether it has one. */
const documentColumns = `id, path, title, kind, size, mtime_ms, content_hash, chars, navigation, indexed_at, duplicate_of, error, reader_version,
  CASE WHEN sketch IS NULL THEN 0 ELSE 1 END AS sketched`;

async function removeDocumentInTx(ctx: SqlContext, tx: SqlExecutor, documentId: number): Promise<void> {
  await ctx.driver.fullText.unindexDocument(tx, documentId);
  await tx.query('DELETE FROM corpus_passages WHERE document_id = ?', [documentId]);
  await tx.query('DELETE FROM corpus_documents WHERE id = ?', [documentId]);
}

/** A field's text with its symbols added as words, so the full-text index finds `$@` and `-F`. */
function withSymbols(text: string): string {
  const symbols = symbolTerms(text);
  return symbols.length > 0 ? `${text}\n${[...new Set(symbols)].join(' ')}` : text;
}

/** The passage's heading path and every heading line inside it (a glossary term, an API entry). */
function headingField(passage: { headings: string; text: string }): string {
  const inside = [...passage.text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map((match) => match[1]!);
  return withSymbols([passage.headings, ...inside].join(' › '));
}

export async function upsertDocument(ctx: SqlContext, input: UpsertDocumentInput): Promise<CorpusDocument> {
  forgetFrequencies(ctx);
  return ctx.driver.transaction(async (tx) => {
    const existing = await tx.query<{ id: number }>('SELECT id FROM corpus_documents WHERE path = ?', [input.path]);
    if (existing[0]) await removeDocumentInTx(ctx, tx, Number(existing[0].id));
    const [document] = await tx.query(
      `INSERT INTO corpus_documents (path, title, kind, size, mtime_ms, content_hash, chars, navigation, sketch, error, reader_version, indexed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${ctx.now}) RETURNING ${documentColumns}`,
      [
        input.path,
        input.title,
        input.kind,
        input.size,
        input.mtimeMs,
        input.contentHash,
        input.chars,
        input.navigation ? 1 : 0,
        input.sketch ?? null,
        input.error ?? null,
        input.readerVersion ?? 0,
      ],
    );
    const documentId = Number(document!.id);
    await ctx.driver.fullText.insertPassages(
      tx,
      { id: documentId, title: input.title },
      input.passages.map((passage, position) => ({
        ...passage,
        position,
        headingField: headingField(passage),
        searchText: withSymbols(passage.text),
      })),
    );
    return toDocument(document!);
  });
}

export async function touchDocument(
  ctx: SqlContext,
  input: { path: string; mtimeMs: number; size: number },
): Promise<void> {
  await ctx.driver.query(`UPDATE corpus_documents SET mtime_ms = ?, size = ?, indexed_at = ${ctx.now} WHERE path = ?`, [
    input.mtimeMs,
    input.size,
    input.path,
  ]);
}

export async function listDocuments(ctx: SqlContext, options: { pathPrefix?: string } = {}): Promise<CorpusDocument[]> {
  const rows = options.pathPrefix
    ? await ctx.driver.query(
        `SELECT ${documentColumns} FROM corpus_documents WHERE path LIKE ? ESCAPE '\\' ORDER BY path`,
        [`${escapeLike(options.pathPrefix)}%`],
      )
    : await ctx.driver.query(`SELECT ${documentColumns} FROM corpus_documents ORDER BY path`);
  return rows.map(toDocument);
}

export async function documentSketches(
  ctx: SqlContext,
  options: { pathPrefix: string },
): Promise<{ path: string; kind: string; title: string; sketch: string }[]> {
  const rows = await ctx.driver.query<{ path: string; kind: string; title: string; sketch: string }>(
    `SELECT path, kind, title, sketch FROM corpus_documents
     WHERE path LIKE ? ESCAPE '\\' AND sketch IS NOT NULL AND error IS NULL ORDER BY path`,
    [`${escapeLike(options.pathPrefix)}%`],
  );
  return rows.map((row) => ({
    path: String(row.path),
    kind: String(row.kind),
    title: String(row.title),
    sketch: String(row.sketch),
  }));
}

export async function markDuplicates(
  ctx: SqlContext,
  entries: { path: string; duplicateOf: string | null }[],
): Promise<void> {
  if (entries.length === 0) return;
  forgetFrequencies(ctx);
  await ctx.driver.transaction(async (tx) => {
    for (const entry of entries)
      await tx.query('UPDATE corpus_documents SET duplicate_of = ? WHERE path = ?', [entry.duplicateOf, entry.path]);
  });
}

export async function removeDocuments(ctx: SqlContext, paths: string[]): Promise<number> {
  forgetFrequencies(ctx);
  if (paths.length === 0) return 0;
  return ctx.driver.transaction(async (tx) => {
    let removed = 0;
    for (const path of paths) {
      const rows = await tx.query<{ id: number }>('SELECT id FROM corpus_documents WHERE path = ?', [path]);
      if (!rows[0]) continue;
      await removeDocumentInTx(ctx, tx, Number(rows[0].id));
      removed += 1;
    }
    return removed;
  });
}

/**
 * Counts stop here (the dialects' `countSql` caps them): past it a word is common, and counting every
 * passage that holds it would cost more as the corpus grows.
 */
export const FREQUENCY_CAP = 2000;

/** How long term counts are reused before they are counted again (another process may have indexed). */
const FREQUENCY_TTL_MS = 60_000;

/** Passage counts per term, per database, until they expire or this process changes the index. */
const frequencies = new WeakMap<object, { expires: number; total: number; terms: Map<string, number> }>();

function forgetFrequencies(ctx: SqlContext): void {
  frequencies.delete(ctx.driver);
}

/**
 * Inverse document frequency of each query term over all passages (counted by the full-text index).
 * Counts are kept for a minute: a search asks for the same common terms again and again, and a
 * count over a large index is most of a search's time.
 */
async function inverseFrequencies(
  ctx: SqlContext,
  terms: string[],
): Promise<{ idf: Map<string, number>; common: Set<string>; absent: Set<string> }> {
  let cached = frequencies.get(ctx.driver);
  if (!cached || cached.expires < Date.now()) {
    const [total] = await ctx.driver.query<{ n: number }>('SELECT COUNT(*) AS n FROM corpus_passages');
    cached = { expires: Date.now() + FREQUENCY_TTL_MS, total: Number(total?.n ?? 0), terms: new Map() };
    frequencies.set(ctx.driver, cached);
  }
  // The words not seen lately are counted together, in one statement.
  const uncounted = [...new Set(terms.filter((term) => !cached.terms.has(term)))];
  if (uncounted.length > 0) {
    const rows = await ctx.driver.query<{ i: number; n: number }>(
      ctx.driver.fullText.countSql(uncounted.length),
      uncounted.flatMap((term) => ctx.driver.fullText.searchParams([term])),
    );
    for (const row of rows) cached.terms.set(uncounted[Number(row.i)]!, Number(row.n));
  }
  const idf = new Map<string, number>();
  const common = new Set<string>();
  const absent = new Set<string>();
  for (const term of terms) {
    const frequency = cached.terms.get(term) ?? 0;
    if (frequency >= FREQUENCY_CAP) common.add(term);
    if (frequency === 0) absent.add(term);
    const key = stem(term);
    idf.set(key, Math.max(idf.get(key) ?? 0, Math.log(1 + (cached.total - frequency + 0.5) / (frequency + 0.5))));
  }
  return { idf, common, absent };
}

function toHit(row: Row, score: number): PassageHit {
  return {
    passageId: Number(row.passage_id),
    documentId: Number(row.document_id),
    path: String(row.path),
    title: String(row.title),
    position: Number(row.position),
    start: Number(row.start_offset),
    end: Number(row.end_offset),
    text: String(row.text),
    headings: String(row.headings),
    linkDensity: Number(row.link_density),
    navigation: Number(row.navigation) === 1,
    score,
  };
}

export async function readPassages(
  ctx: SqlContext,
  input: { path: string; positions: number[] },
): Promise<PassageHit[]> {
  if (input.positions.length === 0) return [];
  const rows = await ctx.driver.query(
    `SELECT p.id AS passage_id, p.document_id, p.position, p.start_offset, p.end_offset, p.text, p.headings, p.link_density,
       d.path, d.title, d.navigation
     FROM corpus_passages p JOIN corpus_documents d ON d.id = p.document_id
     WHERE d.path = ? AND p.position IN (${input.positions.map(() => '?').join(', ')}) ORDER BY p.position`,
    [input.path, ...input.positions],
  );
  return rows.map((row) => toHit(row, 0));
}

export async function searchPassages(ctx: SqlContext, input: SearchPassagesInput): Promise<PassageHit[]> {
  const terms = queryTerms(input.query);
  if (terms.length === 0) return [];
  const limit = input.limit ?? 10;
  const prefixes = input.pathPrefixes ?? [];
  // Mirrors and aggregates of other pages are never searched: their pages are.
  const filter = ` AND d.duplicate_of IS NULL${prefixes.length ? ` AND (${prefixes.map(() => `d.path LIKE ? ESCAPE '\\'`).join(' OR ')})` : ''}`;
  const { fullText } = ctx.driver;
  // Two words of the query that the corpus also writes as one ("time zone", "timezone") are searched
  // that way too, when some passage does.
  const pairs = new Map(
    compoundPairs(input.query).map(([first, second]) => [`${first}${second}`, [stem(first), stem(second)] as const]),
  );
  const compounds = [...pairs.keys()].filter((compound) => !terms.includes(compound));
  // A word the manual may use for the query's ("remove" for "delete") finds passages too, and counts
  // as the query's word (never twice, never as a word of its own).
  const synonymOf = new Map<string, string>();
  for (const term of terms)
    for (const synonym of synonymsOf(term))
      if (!terms.includes(synonym) && !synonymOf.has(synonym)) synonymOf.set(synonym, term);
  const counted = await inverseFrequencies(ctx, [...terms, ...compounds, ...synonymOf.keys()]);
  const present = compounds.filter((compound) => !counted.absent.has(compound));
  const synonyms = [...synonymOf.keys()].filter((synonym) => !counted.absent.has(synonym));
  const { idf, common } = counted;
  // A word in a large share of all passages finds everything and tells nothing: it still counts in
  // the ranking, but the candidates are found by the rarer words (when there are any).
  const finding = [...terms, ...present, ...synonyms].filter((term) => !common.has(term));
  // Candidates by the index's own relevance, then ranked with fields (BM25F) and prose weight.
  const rows = await ctx.driver.query(fullText.searchSql(filter), [
    ...fullText.searchParams(finding.length > 0 ? finding : terms),
    ...prefixes.map((prefix) => `${escapeLike(prefix)}%`),
    // Twice the passages asked for: enough for the reranking to reorder, few enough to rank quickly.
    Math.max(limit, 100) * 2,
  ]);
  const query = [...new Set([...terms, ...present].map(stem))];
  const standsFor = new Map(
    synonyms
      .map((synonym) => [stem(synonym), stem(synonymOf.get(synonym)!)] as const)
      .filter(([key]) => !query.includes(key)),
  );
  return rankCandidates(
    rows.map((row) => candidate(toHit(row, 0), [...query, ...standsFor.keys()])),
    query,
    idf,
    new Map(present.map((compound) => [stem(compound), pairs.get(compound)!])),
    standsFor,
  ).slice(0, limit);
}

export async function refreshCorpusStatistics(ctx: SqlContext): Promise<void> {
  await ctx.driver.query(ctx.driver.fullText.refreshStatisticsSql);
}
