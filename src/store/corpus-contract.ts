import * as z from 'zod';
import { optional } from 'zod';
import { bigText, int, limits, list, nonEmpty, number, sha256Hex, text } from './schema-parts.ts';
import type { CheckedTable, SchemaTable } from './schema-table.ts';

/**
 * The local documents index's contract: documents, their passages, and search over them (one of the
 * store's concerns; `Store` extends `Corpus`), with each operation's argument schemas, which the
 * validating store applies in front of every backend.
 */

export interface CorpusDocument {
  id: number;
  /** Absolute file path. */
  path: string;
  title: string;
  /** `markdown`, `text`, `html` or `pdf`. */
  kind: string;
  size: number;
  mtimeMs: number;
  /** sha-256 of the file's bytes. */
  contentHash: string;
  /** Characters of extracted text. */
  chars: number;
  /** A navigation page (index, table of contents, link list): searchable, ranked last, never read. */
  navigation: boolean;
  indexedAt: number;
  /** Whether the document has a sketch of its text (documents indexed before version 12 have none). */
  sketched: boolean;
  /**
   * What the document duplicates: the path of the page it mirrors, `*` for an aggregate of several
   * pages, or null. Duplicates are never searched.
   */
  duplicateOf: string | null;
  /** Why the file could not be indexed (it then has no passages); null when it was. */
  error: string | null;
  /** The version of the reader that made its passages (0: indexed before versions were recorded). */
  readerVersion: number;
}

export interface PassageInput {
  /** Character offsets of the passage in the document's extracted text. */
  start: number;
  end: number;
  text: string;
  /** The section headings above the passage, outermost first, joined by " › " ("" at the top). */
  headings: string;
  /** Share of the passage's characters that are link text, 0 to 1. */
  linkDensity: number;
}

export interface UpsertDocumentInput {
  path: string;
  title: string;
  kind: string;
  size: number;
  mtimeMs: number;
  contentHash: string;
  chars: number;
  navigation: boolean;
  /** Replace the document's passages, in order. */
  passages: PassageInput[];
  /** A sketch of the document's text, for finding mirrors and aggregates (`sketchOf`). */
  sketch?: string;
  /** Why the file could not be indexed: recorded without passages, so it is not read again until it changes. */
  error?: string;
  /** The version of the reader that made the passages (default 0). */
  readerVersion?: number;
}

export interface PassageHit {
  passageId: number;
  documentId: number;
  path: string;
  title: string;
  /** Position of the passage in its document, from 0. */
  position: number;
  start: number;
  end: number;
  text: string;
  headings: string;
  linkDensity: number;
  /** The passage's document is a navigation page. */
  navigation: boolean;
  /**
   * Higher is better; comparable within one result list only. Title and headings count more than
   * body text (BM25F-style fields); link-heavy passages and navigation pages rank below prose.
   */
  score: number;
}

export interface SearchPassagesInput {
  /** Free text; the words are matched (any of them), ranked by relevance. */
  query: string;
  /** Default 10, at most 100. */
  limit?: number;
  /** Only documents under these folders (absolute paths). */
  pathPrefixes?: string[];
}

/** The local documents index: documents, their passages, and search over them. */
export interface Corpus {
  /** Inserts or replaces a document and its passages (and their full-text index) in one transaction. */
  upsertDocument(input: UpsertDocumentInput): Promise<CorpusDocument>;
  /** Records a new mtime for a document whose content did not change. */
  touchDocument(input: { path: string; mtimeMs: number; size: number }): Promise<void>;
  /** Documents under a folder (all when omitted), by path; never their passages. */
  listDocuments(options?: { pathPrefix?: string }): Promise<CorpusDocument[]>;
  /** The sketches of the documents under a folder (documents without one are left out), by path. */
  documentSketches(options: {
    pathPrefix: string;
  }): Promise<{ path: string; kind: string; title: string; sketch: string }[]>;
  /** Records what documents duplicate (`CorpusDocument.duplicateOf`), in one transaction. */
  markDuplicates(entries: { path: string; duplicateOf: string | null }[]): Promise<void>;
  /** Removes documents and their passages; returns how many documents. */
  removeDocuments(paths: string[]): Promise<number>;
  /**
   * Brings the database's statistics about the index up to date after indexing, so searches keep
   * their fast plan as the corpus grows (PostgreSQL `ANALYZE`; SQLite `PRAGMA optimize`).
   */
  refreshCorpusStatistics(): Promise<void>;
  /**
   * Passages matching any word of the query, best first: BM25 over title, headings and text on
   * SQLite; weighted ts_rank on PostgreSQL; link-heavy passages and navigation pages last.
   */
  searchPassages(input: SearchPassagesInput): Promise<PassageHit[]>;
  /**
   * Passages of the document at `path` at these positions, in position order (missing positions and
   * paths are skipped); score 0. By path, never by document id: a read names what it may read.
   */
  readPassages(input: { path: string; positions: number[] }): Promise<PassageHit[]>;
}

/** The corpus operations' argument schemas, one per positional argument (see `validating-store.ts`). */
export const corpusSchemas = {
  upsertDocument: [
    z.object({
      path: nonEmpty(4000),
      title: text(1000),
      kind: nonEmpty(20),
      size: int(0),
      mtimeMs: number(0),
      contentHash: sha256Hex(),
      chars: int(0),
      navigation: z.boolean(),
      passages: list(
        z.object({
          start: int(0),
          end: int(0),
          text: bigText(limits.messageChars),
          headings: text(2000),
          linkDensity: number(0, 1),
        }),
        200_000,
      ),
      sketch: optional(bigText(limits.payloadBytes)),
      error: optional(text(2000)),
      readerVersion: optional(int(0)),
    }),
  ],
  touchDocument: [z.object({ path: nonEmpty(4000), mtimeMs: number(0), size: int(0) })],
  documentSketches: [z.object({ pathPrefix: nonEmpty(4000) })],
  markDuplicates: [list(z.object({ path: nonEmpty(4000), duplicateOf: z.nullable(nonEmpty(4000)) }), 1_000_000)],
  listDocuments: [optional(z.object({ pathPrefix: optional(text(4000)) }))],
  removeDocuments: [list(text(4000), 1_000_000)],
  refreshCorpusStatistics: [],
  readPassages: [z.object({ path: text(4096), positions: list(int(0), 100) })],
  searchPassages: [
    z.object({
      query: text(2000),
      limit: optional(int(1, 100)),
      pathPrefixes: optional(list(z.string().check(z.minLength(1), z.maxLength(4000)), 50)),
    }),
  ],
} as const satisfies SchemaTable<Corpus>;

/** Each schema checked against its operation's signature: a missing or drifting one does not compile. */
const checkedAgainstCorpus: CheckedTable<Corpus, typeof corpusSchemas> = corpusSchemas;
void checkedAgainstCorpus;
