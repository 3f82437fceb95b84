import { accessSync, constants, copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

/** True when this process may create files in the folder (false on a read-only mount, even for root). */
export function writable(folder: string): boolean {
  try {
    accessSync(folder, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A private copy of a store this process cannot write beside (another user's folder, a read-only
 * mount), with its write-ahead log, or a rollback journal a crash left, so the copy holds every
 * committed write; opened read-only. The caller removes `folder` when it closes.
 */
export function openSnapshot(
  path: string,
  open: (path: string, options?: BetterSqlite3.Options) => BetterSqlite3.Database,
): { db: BetterSqlite3.Database; folder: string; reason: string } {
  const folder = mkdtempSync(join(tmpdir(), 'quarry-read-only-'));
  const copy = join(folder, basename(path));
  copyFileSync(path, copy);
  for (const suffix of ['-wal', '-journal'])
    if (existsSync(`${path}${suffix}`)) copyFileSync(`${path}${suffix}`, `${copy}${suffix}`);
  const reason = `its folder ${dirname(path)} cannot be written; reading a copy made ${new Date().toISOString()}`;
  if (existsSync(`${copy}-journal`)) {
    // A hot rollback journal is rolled back on open, which needs a writable file: the copy's is.
    const recovering = open(copy);
    recovering.prepare('SELECT count(*) FROM sqlite_master').get();
    recovering.close();
  }
  return { db: open(copy, { readonly: true }), folder, reason };
}
