import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { invalidInput, isQuarryError } from '../../../shared/errors.ts';
import type { Corpus, CorpusDocument } from '../../../store/store.ts';
import { type DocumentKind, kindFromPath } from '../../extract/extracted-document.ts';
import { findDuplicates } from './duplicates.ts';
import { ExtractPool } from './extract-pool.ts';
import { READER_VERSION, type ReadDocument } from './read-document.ts';

export interface IndexProgress {
  done: number;
  total: number;
  path: string;
}

export interface IndexFoldersOptions {
  /** Files larger than this are skipped. Default 25 MB. */
  maxFileBytes?: number;
  onProgress?: (progress: IndexProgress) => void;
  signal?: AbortSignal;
}

export interface IndexReport {
  folders: string[];
  added: number;
  updated: number;
  unchanged: number;
  removed: number;
  /** Files not indexed, each with the reason; a bad file never stops the rest. */
  skipped: { path: string; reason: string }[];
  passages: number;
  /** Characters of text extracted from added and updated files. */
  chars: number;
}

/**
 * Folders never indexed: dependencies and version control, and the copies documentation builders
 * keep beside their pages (Sphinx's `_sources` holds every page again as reStructuredText).
 */
export const ignoredFolders = new Set([
  'node_modules',
  '.git',
  '.hg',
  '.svn',
  '_sources',
  '_static',
  '_images',
  '_downloads',
  '.doctrees',
]);

/** Every file below `folder` (depth first, sorted), without hidden or dependency folders. */
async function listFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.') || ignoredFolders.has(entry.name)) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

/** A folder path as the corpus stores it: absolute, with a trailing separator for prefix matches. */
export function folderPrefix(folder: string): string {
  const absolute = resolve(folder);
  return absolute.endsWith(sep) ? absolute : absolute + sep;
}

/** A file to store once read: what is known of it before, and its bytes. */
interface Pending {
  path: string;
  previous: CorpusDocument | undefined;
  size: number;
  mtimeMs: number;
  contentHash: string;
  kind: DocumentKind;
  read: Promise<ReadDocument>;
}

/**
 * One folder: files are read in batches on the extract pool's threads and stored in file order, so
 * the index (and every search's tie-breaks) is the same however the threads finish.
 */
async function indexFolder(
  store: Corpus,
  folder: string,
  context: { report: IndexReport; pool: ExtractPool; maxFileBytes: number; options: IndexFoldersOptions },
): Promise<void> {
  const { report, pool, maxFileBytes, options } = context;
  const known = new Map(
    (await store.listDocuments({ pathPrefix: folderPrefix(folder) })).map((document) => [document.path, document]),
  );
  const files = (await listFiles(folder)).filter((path) => kindFromPath(path) !== null);
  const batch: Pending[] = [];
  let done = 0;
  // Documents this folder's run stored or removed: when there are any, duplicates are found again.
  let changed = 0;
  const flush = async () => {
    for (const pending of batch.splice(0)) {
      options.signal?.throwIfAborted();
      const { path, previous } = pending;
      // A file that cannot be indexed is recorded with its reason and hash, so it is not read again
      // until it changes (reading it again on every run was a large share of some runs' time).
      const recordFailure = async (reason: string) => {
        report.skipped.push({ path, reason });
        await store.upsertDocument({
          path,
          title: path.split(sep).at(-1) ?? path,
          kind: pending.kind,
          size: pending.size,
          mtimeMs: pending.mtimeMs,
          contentHash: pending.contentHash,
          chars: 0,
          navigation: false,
          passages: [],
          error: reason.slice(0, 2000),
          readerVersion: READER_VERSION,
        });
        known.delete(path);
        changed += 1;
      };
      try {
        let document: ReadDocument;
        try {
          document = await pending.read;
        } catch (error) {
          await recordFailure((error as Error).message || String(error));
          continue;
        }
        if (document.passages.length === 0) {
          // Text made only of headings and tables (a chapter's table of contents) has nothing to quote.
          await recordFailure(
            document.chars > 0 ? 'only headings and tables, no prose (a table of contents?)' : 'no text found',
          );
          continue;
        }
        await store.upsertDocument({
          path,
          title: document.title,
          kind: pending.kind,
          size: pending.size,
          mtimeMs: pending.mtimeMs,
          contentHash: pending.contentHash,
          chars: document.chars,
          navigation: document.navigation,
          passages: document.passages,
          sketch: document.sketch,
          readerVersion: READER_VERSION,
        });
        changed += 1;
        known.delete(path);
        report[previous ? 'updated' : 'added'] += 1;
        report.passages += document.passages.length;
        report.chars += document.chars;
      } catch (error) {
        if (storeFailed(error)) throw error;
        report.skipped.push({ path, reason: (error as Error).message || String(error) });
      } finally {
        options.onProgress?.({ done: ++done, total: files.length, path });
      }
    }
  };
  for (const path of files) {
    options.signal?.throwIfAborted();
    const previous = known.get(path);
    // Whatever stays in `known` at the end is removed: files that are gone, and files now skipped.
    try {
      const info = await stat(path);
      if (info.size > maxFileBytes) {
        report.skipped.push({ path, reason: `too large (${info.size} bytes; the limit is ${maxFileBytes})` });
      } else if (
        previous &&
        previous.size === info.size &&
        previous.mtimeMs === Math.floor(info.mtimeMs) &&
        previous.readerVersion === READER_VERSION
      ) {
        known.delete(path);
        report.unchanged += 1;
      } else {
        const bytes = await readFile(path);
        const contentHash = createHash('sha256').update(bytes).digest('hex');
        if (previous && previous.contentHash === contentHash && previous.readerVersion === READER_VERSION) {
          await store.touchDocument({ path, mtimeMs: Math.floor(info.mtimeMs), size: info.size });
          known.delete(path);
          report.unchanged += 1;
        } else {
          const kind = kindFromPath(path)!;
          const read = pool.read(bytes, kind, path);
          // Settled later, in order; a failure is reported then, never an unhandled rejection now.
          read.catch(() => undefined);
          batch.push({ path, previous, size: info.size, mtimeMs: Math.floor(info.mtimeMs), contentHash, kind, read });
          if (batch.length >= pool.parallelism * BATCH_PER_THREAD) await flush();
          continue;
        }
      }
    } catch (error) {
      if (storeFailed(error)) throw error;
      report.skipped.push({ path, reason: (error as Error).message || String(error) });
    }
    options.onProgress?.({ done: ++done, total: files.length, path });
  }
  await flush();
  options.onProgress?.({ done: files.length, total: files.length, path: folder });
  const removed = await store.removeDocuments([...known.keys()]);
  report.removed += removed;
  if (changed + removed > 0) await markDuplicates(store, folder);
}

/** Finds the folder's mirrors and aggregates again and records what changed (`duplicates.ts`). */
async function markDuplicates(store: Corpus, folder: string): Promise<void> {
  const prefix = folderPrefix(folder);
  const found = findDuplicates(await store.documentSketches({ pathPrefix: prefix }));
  const current = new Map(
    (await store.listDocuments({ pathPrefix: prefix })).map((document) => [document.path, document.duplicateOf]),
  );
  const changed = [...current.entries()]
    .map(([path, duplicateOf]) => ({ path, before: duplicateOf, after: found.get(path) ?? null }))
    .filter((entry) => entry.before !== entry.after)
    .map(({ path, after }) => ({ path, duplicateOf: after }));
  await store.markDuplicates(changed);
}

/** Files read ahead per extract thread: enough to keep every thread busy while the batch is stored. */
const BATCH_PER_THREAD = 4;

/**
 * A failure of the store, not of a file (a full disk, a lost database): indexing stops and says so,
 * instead of reporting every remaining file as skipped.
 */
function storeFailed(error: unknown): boolean {
  return isQuarryError(error) && error.code.startsWith('STORE_');
}

/**
 * Brings the corpus in line with the folders: new and changed files are extracted, chunked and
 * indexed; unchanged ones (same size and mtime, or same content hash) are skipped; files that are
 * gone are removed. Unreadable, binary, huge or malformed files are reported, never thrown.
 */
export async function indexFolders(
  store: Corpus,
  folders: string[],
  options: IndexFoldersOptions = {},
): Promise<IndexReport> {
  const maxFileBytes = options.maxFileBytes ?? 25 * 1024 * 1024;
  const report: IndexReport = {
    folders: folders.map((folder) => resolve(folder)),
    added: 0,
    updated: 0,
    unchanged: 0,
    removed: 0,
    skipped: [],
    passages: 0,
    chars: 0,
  };
  for (const folder of report.folders) {
    const info = await stat(folder).catch(() => null);
    if (!info?.isDirectory()) throw invalidInput('folder', `${folder} is not a folder that can be read`);
  }
  const pool = ExtractPool.open();
  try {
    for (const folder of report.folders) await indexFolder(store, folder, { report, pool, maxFileBytes, options });
  } finally {
    await pool.close();
  }
  if (report.added + report.updated + report.removed > 0) await store.refreshCorpusStatistics();
  return report;
}
