import { relative, sep } from 'node:path';
import { ignoredFolders } from '../providers/search/local-corpus/index-folders.ts';

/** A watch on document folders; `close` stops it. */
export interface FolderWatch {
  /** Resolves once the folders are being watched (changes before then are not seen). */
  ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * Calls `changed(folder)` when files in one of `folders` are added, changed or removed (hidden and
 * dependency folders aside, as indexing skips them), once the changes settle: a burst of saves, a
 * copied tree, is one call per folder `settleMs` after the last of them. chokidar does the watching
 * (inotify on Linux, FSEvents on macOS).
 */
export async function watchFolders(
  folders: string[],
  changed: (folder: string) => void,
  options: { settleMs?: number } = {},
): Promise<FolderWatch> {
  const settleMs = options.settleMs ?? 500;
  const { watch } = await import('chokidar');
  const timers = new Map<string, NodeJS.Timeout>();
  const ownerOf = (path: string) =>
    folders.find((folder) => path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep));
  const watcher = watch(folders, {
    ignoreInitial: true,
    // Only below a watched folder: a hidden or dependency folder is never watched (nor indexed).
    ignored: (path: string) => {
      const folder = ownerOf(path);
      if (!folder) return false;
      return relative(folder, path)
        .split(sep)
        .some((part) => part.startsWith('.') || ignoredFolders.has(part));
    },
    // A file being written is seen once its size stops changing, not half-written.
    awaitWriteFinish: { stabilityThreshold: Math.min(300, settleMs), pollInterval: 50 },
  });
  watcher.on('all', (_event, path) => {
    const folder = ownerOf(path);
    if (!folder) return;
    clearTimeout(timers.get(folder));
    timers.set(
      folder,
      setTimeout(() => {
        timers.delete(folder);
        changed(folder);
      }, settleMs),
    );
  });
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    ready,
    async close() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await watcher.close();
    },
  };
}
