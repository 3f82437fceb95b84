import { compoundPairs, isSymbolTerm, queryTerms, stem, stems, symbolTerms } from '../../shared/terms.ts';
import type { CorpusDocument, PassageHit, SearchPassagesInput, UpsertDocumentInput } from '../store.ts';
import { escapeLike } from './codec.ts';
import type { SqlContext } from './context.ts';
import { fieldCounts } from './field-counts.ts';
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

/** How much a passage's links and a navigation page lower its rank: prose first, link lists last. */
function proseWeight(linkDensity: number, navigation: boolean): number {
  return (1 - 0.8 * Math.min(1, linkDensity)) * (navigation ? 0.05 : 1);
}

/** Field weights and length normalization of the BM25F ranking (title and headings count more than text). */
const FIELDS = {
  title: { weight: 3, b: 0.5 },
  headings: { weight: 2, b: 0.5 },
  text: { weight: 1, b: 0.75 },
} as const;
type Field = keyof typeof FIELDS;
const K1 = 1.2;

interface Candidate {
  hit: PassageHit;
  /** Stem counts per field. */
  counts: Record<Field, Map<string, number>>;
  lengths: Record<Field, number>;
  headingStems: Set<string>[];
}

/** Adds how often the query's symbols (`symbolTerms`) occur in a field to its word counts. */
function withSymbolCounts(
  field: { counts: Map<string, number>; length: number },
  text: string,
  query: readonly string[],
): { counts: Map<string, number>; length: number } {
  if (!query.some(isSymbolTerm)) return field;
  for (const symbol of symbolTerms(text))
    if (query.includes(symbol)) field.counts.set(symbol, (field.counts.get(symbol) ?? 0) + 1);
  return field;
}

function candidate(hit: PassageHit, query: readonly string[]): Candidate {
  const inner = [...hit.text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map((match) => match[1]!);
  const headings = [hit.headings.split(' › ').at(-1) ?? '', ...inner];
  // An API entry ("json.dumps(obj, *, skipkeys=False…)") is named by what comes before its arguments.
  const names = headings.flatMap((heading) => {
    const name = /^(?:class\s+|@)?([\w.]+)\s*\(/.exec(heading.replace(/`/g, ''))?.[1];
    return name ? [name, name.split('.').at(-1)!] : [];
  });
  const title = withSymbolCounts(fieldCounts(hit.title, query), hit.title, query);
  const heading = withSymbolCounts(fieldCounts(headings.join(' '), query), headings.join(' '), query);
  const text = withSymbolCounts(fieldCounts(hit.text, query), hit.text, query);
  return {
    hit,
    counts: { title: title.counts, headings: heading.counts, text: text.counts },
    lengths: { title: title.length, headings: heading.length, text: text.length },
    headingStems: [...headings, ...names].map((each) => new Set(stems(each))).filter((each) => each.size > 0),
  };
}

/** The subject part of a title ("json — JSON encoder and decoder" → "json"). */
function titleHead(title: string): Set<string> {
  return new Set(stems(title.split(/\s+[—–-]\s+|:\s/)[0] ?? ''));
}

/**
 * Release notes and changelogs, by their title ("What’s New In Python 3.8", "E.1. Release 15.2"): they
 * tell when something changed, and mention everything; a question about how something works is
 * answered by the reference. They count half, unless the query asks about change or versions.
 */
function isHistory(title: string): boolean {
  return /\b(?:what[’']?s new|release notes?|changelog|change log|changes in|release \d)/i.test(title);
}
const historyTerms = new Set(['new', 'chang', 'releas', 'version', 'add', 'deprecat', 'remov', 'histor'].map(stem));

/**
 * BM25F over the candidates: each field's term frequency normalized by that field's own length, so a
 * title repeated on every passage of a page does not favour the shortest passages; plus a bonus for a
 * section or page named exactly what the query asks about (a glossary entry, a module's page); times
 * the prose weight (link lists and navigation pages last) and the history weight (`isHistory`).
 */
function rankCandidates(
  candidates: Candidate[],
  query: string[],
  idf: Map<string, number>,
  alternatives: ReadonlyMap<string, readonly [string, string]> = new Map(),
): PassageHit[] {
  const average = (field: Field) =>
    Math.max(1, candidates.reduce((sum, each) => sum + each.lengths[field], 0) / Math.max(1, candidates.length));
  const averages = { title: average('title'), headings: average('headings'), text: average('text') };
  // What the query is about: its terms that are not everywhere ("python" in Python's own manual).
  // (Compound spellings of two query words are alternatives, never required.)
  const specific = query.filter((term) => (idf.get(term) ?? 0) >= 1.6 && !alternatives.has(term));
  const asksHistory = query.some((term) => historyTerms.has(term));
  const wanted = new Set(specific.length > 0 ? specific : query.filter((term) => !alternatives.has(term)));
  return candidates
    .map(({ hit, counts, lengths, headingStems }) => {
      // A field that writes two query words as one ("timezone") holds each of them.
      for (const [compound, parts] of alternatives)
        for (const field of Object.values(counts)) {
          const found = field.get(compound) ?? 0;
          if (found > 0) for (const part of parts) field.set(part, (field.get(part) ?? 0) + found);
        }
      let score = 0;
      for (const term of query) {
        let tf = 0;
        for (const field of Object.keys(FIELDS) as Field[]) {
          const { weight, b } = FIELDS[field];
          const frequency = counts[field].get(term) ?? 0;
          if (frequency > 0) tf += (weight * frequency) / (1 - b + (b * lengths[field]) / averages[field]);
        }
        if (tf > 0) score += (idf.get(term) ?? 0) * ((tf * (K1 + 1)) / (tf + K1));
      }
      // Named exactly: every specific query term, and nothing the query does not ask about.
      const named = (stemSet: Set<string>) =>
        [...wanted].every((term) => stemSet.has(term)) && [...stemSet].every((term) => query.includes(term));
      // A page named for the subject (a module's page) is about it more surely than a section that is.
      const bonus = named(titleHead(hit.title)) ? score * 0.6 + 2 : headingStems.some(named) ? score * 0.4 + 1 : 0;
      const total =
        (score + bonus) *
        proseWeight(hit.linkDensity, hit.navigation) *
        (asksHistory || !isHistory(hit.title) ? 1 : 0.5);
      return { ...hit, score: Number(total.toFixed(6)) };
    })
    .sort((a, b) => b.score - a.score || a.passageId - b.passageId);
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
  const counted = await inverseFrequencies(ctx, [...terms, ...compounds]);
  const present = compounds.filter((compound) => !counted.absent.has(compound));
  const { idf, common } = counted;
  // A word in a large share of all passages finds everything and tells nothing: it still counts in
  // the ranking, but the candidates are found by the rarer words (when there are any).
  const finding = [...terms, ...present].filter((term) => !common.has(term));
  // Candidates by the index's own relevance, then ranked with fields (BM25F) and prose weight.
  const rows = await ctx.driver.query(fullText.searchSql(filter), [
    ...fullText.searchParams(finding.length > 0 ? finding : terms),
    ...prefixes.map((prefix) => `${escapeLike(prefix)}%`),
    // Twice the passages asked for: enough for the reranking to reorder, few enough to rank quickly.
    Math.max(limit, 100) * 2,
  ]);
  const query = [...new Set([...terms, ...present].map(stem))];
  return rankCandidates(
    rows.map((row) => candidate(toHit(row, 0), query)),
    query,
    idf,
    new Map(present.map((compound) => [stem(compound), pairs.get(compound)!])),
  ).slice(0, limit);
}

export async function refreshCorpusStatistics(ctx: SqlContext): Promise<void> {
  await ctx.driver.query(ctx.driver.fullText.refreshStatisticsSql);
}
