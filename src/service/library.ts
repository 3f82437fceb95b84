import { createHash, randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { QuarryConfig } from '../config/quarry-config.ts';
import { type DocumentKind, kindFromPath } from '../providers/extract/extracted-document.ts';
import { indexFolders } from '../providers/search/local-corpus/index-folders.ts';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import type { Corpus } from '../store/store.ts';
import type { DocumentRoot, FolderPolicy } from './document-folders.ts';

/**
 * A user's library: documents they add themselves (from the web UI, `POST /api/documents` or
 * `quarry docs add`), kept in a folder of their own, `<library>/<user>/<document id>/<file name>`,
 * and indexed at once. Their sessions may search it beside the operator's folders, under the root
 * name `library` (or one document alone, `library/<id>`); nobody else's can. A file is added whole
 * or not at all: one the corpus cannot read is refused with the reason, and nothing of it is kept.
 */

/** One file in a library. */
export interface LibraryDocument {
  /** The document's folder in the library: what `library/<id>` names and `DELETE` takes. */
  id: string;
  name: string;
  kind: DocumentKind;
  size: number;
  title: string;
  addedAt: string;
}

/** A file received and waiting to be added: where it was written, what it is called. */
export interface IncomingFile {
  name: string;
  path: string;
  size: number;
}

/** Largest file a library takes, as the indexer reads no larger. */
export const LIBRARY_FILE_BYTES = 25 * 1024 * 1024;

/** The root name requests use for a user's library. */
export const LIBRARY_ROOT = 'library';

/** The user's library folder (created on first use). An id that is no safe folder name is hashed. */
export function libraryFolder(config: Pick<QuarryConfig, 'library'>, ownerId: string): string {
  const safe = /^[A-Za-z0-9_-]{1,64}$/.test(ownerId)
    ? ownerId
    : createHash('sha256').update(ownerId).digest('hex').slice(0, 32);
  return join(config.library, safe);
}

/** Where a request's received files wait: a hidden folder, which the indexer never walks. */
export async function incomingFolder(config: Pick<QuarryConfig, 'library'>, ownerId: string): Promise<string> {
  const folder = join(libraryFolder(config, ownerId), '.incoming', randomBytes(8).toString('hex'));
  try {
    await mkdir(folder, { recursive: true });
  } catch (error) {
    // A library setting that names a file, or a folder this process may not write: said as such.
    throw invalidInput(
      'QUARRY_LIBRARY',
      `${config.library} cannot hold the library (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): set QUARRY_LIBRARY to a folder this process can write`,
    );
  }
  return folder;
}

/**
 * Removes a request's incoming folder, and the user's library folder with it when nothing else is in
 * it: a refused first upload leaves no library behind (an empty one would be listed as a folder).
 */
export async function discardIncoming(config: Pick<QuarryConfig, 'library'>, ownerId: string, folder: string) {
  await rm(folder, { recursive: true, force: true });
  const owner = libraryFolder(config, ownerId);
  const incoming = join(owner, '.incoming');
  if ((await readdir(incoming).catch(() => [])).length === 0) await rm(incoming, { recursive: true, force: true });
  if ((await readdir(owner).catch(() => ['?'])).length === 0) await rm(owner, { recursive: true, force: true });
}

/** The folders a user may read: the policy's, and their library once it exists. */
export function withLibrary(
  policy: FolderPolicy,
  config: Pick<QuarryConfig, 'library'>,
  ownerId: string,
): FolderPolicy {
  if (policy.kind === 'any') return policy;
  const folder = libraryFolder(config, ownerId);
  const libraries = existsSync(config.library) ? realpathSync(config.library) : config.library;
  if (!existsSync(folder)) return { ...policy, libraries };
  let name = LIBRARY_ROOT;
  for (let index = 2; policy.roots.some((root) => root.name === name); index++) name = `${LIBRARY_ROOT}-${index}`;
  const root: DocumentRoot = { name, path: realpathSync(folder) };
  return { kind: 'roots', roots: [...policy.roots, root], libraries };
}

/** The name of the user's library among the policy's roots, or null when they have none yet. */
export function libraryRootName(
  policy: FolderPolicy,
  config: Pick<QuarryConfig, 'library'>,
  ownerId: string,
): string | null {
  const folder = libraryFolder(config, ownerId);
  if (policy.kind === 'any' || !existsSync(folder)) return null;
  const real = realpathSync(folder);
  return policy.roots.find((root) => root.path === real)?.name ?? null;
}

/** A file name as the library keeps it: its last segment, without control characters, not hidden. */
function safeName(name: string): string {
  const cleaned = basename(name.replace(/\\/g, '/'))
    .split('')
    .filter((char) => char.charCodeAt(0) > 0x1f && char.charCodeAt(0) !== 0x7f)
    .join('')
    .trim()
    .slice(0, 200);
  if (!cleaned || cleaned.startsWith('.')) throw invalidInput('file', `"${name}" is not a file name the library keeps`);
  return cleaned;
}

const READABLE =
  'Markdown, text, HTML, PDF, Word, EPUB, OpenDocument, PowerPoint, CSV/TSV and spreadsheets (.xlsx, .ods)';

/** One add at a time per user, so two uploads cannot both pass the size limit. */
const adding = new Map<string, Promise<unknown>>();

function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = adding.get(key) ?? Promise.resolve();
  const next = previous.then(work, work);
  adding.set(key, next);
  const forget = () => {
    if (adding.get(key) === next) adding.delete(key);
  };
  next.then(forget, forget);
  return next;
}

/** Bytes of the documents kept in a folder: files on their way in (the hidden `.incoming`) are not kept yet. */
async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
    if (entry.name.startsWith('.')) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) total += await folderBytes(path);
    else if (entry.isFile()) total += (await stat(path)).size;
  }
  return total;
}

/**
 * Adds received files to the user's library and indexes them. All or nothing: a file of a kind the
 * corpus does not read, past the size limits, or that cannot be read (a broken or hostile archive,
 * no text) refuses the whole request, and none of its files is kept. The received files are moved,
 * or removed when refused.
 */
export async function addToLibrary(
  services: { corpus: Corpus; config: QuarryConfig },
  ownerId: string,
  files: IncomingFile[],
): Promise<LibraryDocument[]> {
  const owner = libraryFolder(services.config, ownerId);
  return oneAtATime(owner, async () => {
    const added: { id: string; folder: string; name: string }[] = [];
    try {
      if (files.length === 0) throw invalidInput('file', 'no file was sent (a multipart form field named "file")');
      const names = files.map((file) => {
        const name = safeName(file.name);
        if (kindFromPath(name) === null)
          throw new QuarryError('UNSUPPORTED_MEDIA_TYPE', `${name}: the library reads ${READABLE}.`, {
            details: { field: 'file' },
          });
        if (file.size > LIBRARY_FILE_BYTES)
          throw new QuarryError('PAYLOAD_TOO_LARGE', `${name} is larger than ${LIBRARY_FILE_BYTES / 1024 / 1024} MB.`, {
            details: { field: 'file' },
          });
        return name;
      });
      const limit = services.config.server.limits.libraryBytes;
      const held = await folderBytes(owner);
      const adds = files.reduce((sum, file) => sum + file.size, 0);
      if (held + adds > limit)
        throw new QuarryError(
          'PAYLOAD_TOO_LARGE',
          `Your library holds ${megabytes(held)} of ${megabytes(limit)}; these files (${megabytes(adds)}) do not fit. Remove documents first.`,
          { details: { field: 'file' } },
        );
      for (const [index, file] of files.entries()) {
        const id = randomBytes(6).toString('hex');
        const folder = join(owner, id);
        await mkdir(folder, { recursive: true });
        await rename(file.path, join(folder, names[index]!));
        added.push({ id, folder, name: names[index]! });
      }
      const report = await indexFolders(
        services.corpus,
        added.map((each) => each.folder),
      );
      const refused = report.skipped[0];
      if (refused)
        throw new QuarryError('INVALID_INPUT', `${basename(refused.path)} cannot be read: ${refused.reason}`, {
          details: { field: 'file' },
        });
      const documents = await listLibrary(services, ownerId);
      return added.map((each) => documents.find((document) => document.id === each.id)!);
    } catch (error) {
      // Nothing of a refused request is kept: its files, and what the index recorded of them.
      for (const each of added) await rm(each.folder, { recursive: true, force: true });
      if (added.length)
        await services.corpus.removeDocuments(added.map((each) => join(realFolder(owner), each.id, each.name)));
      throw error;
    } finally {
      for (const file of files) await rm(file.path, { force: true });
    }
  });
}

function realFolder(folder: string): string {
  return existsSync(folder) ? realpathSync(folder) : folder;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}

/** The user's library, newest first. */
export async function listLibrary(
  services: { corpus: Corpus; config: QuarryConfig },
  ownerId: string,
): Promise<LibraryDocument[]> {
  const owner = libraryFolder(services.config, ownerId);
  if (!existsSync(owner)) return [];
  const real = realpathSync(owner);
  const indexed = new Map(
    (await services.corpus.listDocuments({ pathPrefix: join(real, '') + (real.endsWith('/') ? '' : '/') })).map(
      (document) => [document.path, document],
    ),
  );
  const documents: LibraryDocument[] = [];
  for (const entry of await readdir(real, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const files = await readdir(join(real, entry.name), { withFileTypes: true });
    const file = files.find((each) => each.isFile());
    if (!file) continue;
    const path = join(real, entry.name, file.name);
    const info = await stat(path);
    documents.push({
      id: entry.name,
      name: file.name,
      kind: kindFromPath(file.name) ?? 'text',
      size: info.size,
      title: indexed.get(path)?.title ?? file.name,
      addedAt: new Date(info.birthtimeMs || info.mtimeMs).toISOString(),
    });
  }
  return documents.sort((a, b) => b.addedAt.localeCompare(a.addedAt) || a.name.localeCompare(b.name));
}

/** Removes a document from the user's library, and its passages from the index. */
export async function removeFromLibrary(
  services: { corpus: Corpus; config: QuarryConfig },
  ownerId: string,
  id: string,
): Promise<void> {
  const owner = libraryFolder(services.config, ownerId);
  const folder = join(owner, id);
  if (!/^[a-f0-9]{12}$/.test(id) || !existsSync(folder))
    throw new QuarryError('DOCUMENT_NOT_FOUND', `No document ${id} in your library.`, { details: { id } });
  const real = realpathSync(folder);
  const paths = (await readdir(real)).map((name) => join(real, name));
  await rm(real, { recursive: true, force: true });
  await services.corpus.removeDocuments(paths);
}
