import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import type { IndexFoldersOptions, IndexReport } from '../providers/search/local-corpus/index-folders.ts';
import { invalidInput, QuarryError } from '../shared/errors.ts';
import type { Corpus } from '../store/store.ts';

/** A folder a server's operator allows, and the short name requests may use for it. */
export interface DocumentRoot {
  name: string;
  path: string;
}

/**
 * Which document folders a caller may name. The CLI acts for the local user on their own machine
 * and reads any folder; a server reads only the roots its operator listed (`serve --docs`).
 */
export type FolderPolicy =
  | { kind: 'any' }
  | {
      kind: 'roots';
      roots: DocumentRoot[];
      /**
       * Where every user's library lies (`QUARRY_LIBRARY`): nothing inside it is readable through
       * a root that holds it, only through a root inside it (the user's own library).
       */
      libraries?: string;
    };

export const anyFolder: FolderPolicy = { kind: 'any' };

/** An existing folder as an absolute path with links resolved, or `INVALID_INPUT`. */
export function existingFolder(folder: string, field = 'docs'): string {
  const absolute = resolve(folder);
  if (!existsSync(absolute) || !statSync(absolute).isDirectory())
    throw invalidInput(field, `${folder} is not a folder`);
  return realpathSync(absolute);
}

/** Roots named by their last path segment (`python3.11/html` → `html`, then `html-2`…). */
export function documentRoots(folders: string[]): DocumentRoot[] {
  const roots: DocumentRoot[] = [];
  for (const folder of folders) {
    const path = existingFolder(folder);
    if (roots.some((root) => root.path === path)) continue;
    const base =
      basename(path)
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, '-') || 'docs';
    let name = base;
    for (let index = 2; roots.some((root) => root.name === name); index++) name = `${base}-${index}`;
    roots.push({ name, path });
  }
  return roots;
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The policy's root that contains `path`, if any (the path must already be absolute and real). */
export function rootOf(policy: FolderPolicy, path: string): DocumentRoot | null {
  if (policy.kind === 'any') return { name: basename(path), path };
  const { libraries } = policy;
  // Inside the libraries, only a library root counts: a server folder that holds them does not.
  const candidates =
    libraries && inside(path, libraries) ? policy.roots.filter((root) => inside(root.path, libraries)) : policy.roots;
  return candidates.find((root) => inside(path, root.path)) ?? null;
}

/**
 * The folders a request may use, as absolute paths. Under `any`, each must exist. Under `roots`, each
 * is a root's name, a root's name and a folder inside it (`library/<id>`), or a path inside a root (anything else is `FORBIDDEN`, naming the roots), and a
 * request that names none gets every root.
 */
export function resolveDocs(policy: FolderPolicy, requested: string[] | undefined): string[] {
  if (policy.kind === 'any') return [...new Set((requested ?? []).map((folder) => existingFolder(folder)))];
  if (requested === undefined) return policy.roots.map((root) => root.path);
  const names = policy.roots.map((root) => root.name).join(', ') || 'none';
  return [
    ...new Set(
      requested.map((entry) => {
        const named = policy.roots.find((root) => root.name === entry);
        if (named) return named.path;
        // `name/folder`: a folder inside a root by the root's name (`library/<id>`, one library document).
        const slash = entry.indexOf('/');
        const under = slash > 0 ? policy.roots.find((root) => root.name === entry.slice(0, slash)) : undefined;
        const path = under ? join(under.path, entry.slice(slash + 1)) : resolve(entry);
        const real = existsSync(path) ? realpathSync(path) : path;
        // Symbolic links are resolved first, so a link inside a root cannot lead out of it.
        if (!rootOf(policy, real) || !existsSync(real) || !statSync(real).isDirectory()) {
          throw new QuarryError(
            'FORBIDDEN',
            `This server does not read "${entry}". Its document folders are: ${names} (give a name, or a folder inside one).`,
            { details: { field: 'docs', allowed: policy.roots.map((root) => root.name) } },
          );
        }
        return real;
      }),
    ),
  ];
}

/** Splits folders into the ones the policy allows and the ones it does not (imports keep the first). */
export function partitionFolders(policy: FolderPolicy, folders: string[]): { kept: string[]; dropped: string[] } {
  if (policy.kind === 'any') return { kept: folders, dropped: [] };
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const folder of folders) {
    // Links resolved first, as for a request: a link inside a root cannot lead out of it.
    const path = resolve(folder);
    const real = existsSync(path) ? realpathSync(path) : path;
    if (rootOf(policy, real)) kept.push(real);
    else dropped.push(folder);
  }
  return { kept, dropped };
}

/** Where indexing of a set of folders stands. */
export interface IndexStatus {
  state: 'idle' | 'indexing' | 'failed';
  /** Files done and in all, for the folder being indexed now. */
  done: number;
  total: number;
  folders: string[];
  error: string | null;
  lastReport: IndexReport | null;
}

/** How far indexing of one folder has come: files done of all. */
export interface IndexProgress {
  folder: string;
  done: number;
  total: number;
}

/**
 * Brings folders into the store's document index. The CLI indexes in the foreground (the command
 * waits, with a progress bar); a server indexes in the background and searches wait until the
 * folders they need are ready, so no request ever waits on indexing.
 */
export interface DocumentIndexer {
  /** CLI: indexes now and returns the report. Server: schedules the folders and returns null at once. */
  ensure(folders: string[], options?: Pick<IndexFoldersOptions, 'onProgress' | 'signal'>): Promise<IndexReport | null>;
  /**
   * Resolves once the folders are indexed (at once when nothing is pending for them); while it
   * waits, `onProgress` hears how indexing of those folders is going.
   */
  ready(folders: string[], signal?: AbortSignal, onProgress?: (progress: IndexProgress) => void): Promise<void>;
  status(): IndexStatus;
  /** Stops indexing that is under way and resolves when nothing writes to the store any more. */
  close(): Promise<void>;
}

/** The indexer (extraction, every document reader) loads when a folder is indexed, not with the service. */
const loadIndexer = () => import('../providers/search/local-corpus/index-folders.ts');

/** Indexes in the caller's time: `ensure` returns when done. */
export function foregroundIndexer(store: Corpus): DocumentIndexer {
  let last: IndexReport | null = null;
  return {
    async ensure(folders, options = {}) {
      if (folders.length === 0) return null;
      last = await (await loadIndexer()).indexFolders(store, folders, options);
      return last;
    },
    async ready() {},
    status: () => ({ state: 'idle', done: 0, total: 0, folders: [], error: null, lastReport: last }),
    async close() {},
  };
}

/** Indexes one batch at a time in the background; `ready` waits for the batches a search needs. */
export function backgroundIndexer(store: Corpus, log: (message: string) => void = console.error): DocumentIndexer {
  const status: IndexStatus = { state: 'idle', done: 0, total: 0, folders: [], error: null, lastReport: null };
  let queue: Promise<void> = Promise.resolve();
  const stopping = new AbortController();
  const pending = new Map<string, Promise<void>>();
  const listeners = new Set<(progress: IndexProgress) => void>();
  return {
    async ensure(folders) {
      for (const folder of folders) {
        if (pending.has(folder) || stopping.signal.aborted) continue;
        const done = queue.then(async () => {
          try {
            if (stopping.signal.aborted) return;
            status.state = 'indexing';
            status.folders = [folder];
            status.lastReport = await (await loadIndexer()).indexFolders(store, [folder], {
              signal: stopping.signal,
              onProgress: (progress) => {
                status.done = progress.done;
                status.total = progress.total;
                for (const listener of listeners) listener({ folder, done: progress.done, total: progress.total });
              },
            });
            status.state = 'idle';
            status.error = null;
          } catch (error) {
            status.state = 'failed';
            status.error = (error as Error).message;
            if (!stopping.signal.aborted) log(`quarry serve: indexing ${folder} failed: ${status.error}`);
          } finally {
            pending.delete(folder);
          }
        });
        pending.set(folder, done);
        queue = done;
      }
      return null;
    },
    async ready(folders, signal, onProgress) {
      const waiting = folders.filter((folder) => pending.has(folder));
      if (waiting.length === 0) return;
      const listener = (progress: IndexProgress) => {
        if (waiting.includes(progress.folder)) onProgress?.(progress);
      };
      if (onProgress) {
        listeners.add(listener);
        // Where indexing stands now, so a run that starts waiting midway says so at once.
        const current = status.folders[0];
        if (status.state === 'indexing' && current && waiting.includes(current) && status.total > 0)
          onProgress({ folder: current, done: status.done, total: status.total });
      }
      try {
        await new Promise<void>((resolvePromise, reject) => {
          const onAbort = () => reject(signal?.reason);
          signal?.addEventListener('abort', onAbort, { once: true });
          void Promise.all(waiting.map((folder) => pending.get(folder))).then(() => {
            signal?.removeEventListener('abort', onAbort);
            resolvePromise();
          });
        });
      } finally {
        listeners.delete(listener);
      }
    },
    status: () => ({ ...status }),
    async close() {
      stopping.abort(new Error('the server is closing'));
      await queue;
    },
  };
}
