import { EventEmitter } from 'node:events';
import { closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { QuarryError, storeClosed } from '../../shared/errors.ts';
import { machineClockMs, machineClockToWallMs, machineLeaseOver } from '../../shared/process-identity.ts';
import { scriptInTransaction } from '../sql/script-in-transaction.ts';
import type { Row, ScriptStatement, SqlDialect, SqlDriver, SqlExecutor } from '../sql/sql-driver.ts';
import { fullText } from './sqlite-full-text.ts';
import { openSnapshot, writable } from './sqlite-snapshot.ts';

/** A connection to the SQLite file at `path`. */
function openDatabase(path: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  const db = new BetterSqlite3(path, options);
  const volatile = { deterministic: false };
  db.function('quarry_lease_now', volatile, () => machineClockMs());
  db.function('quarry_lease_over', volatile, (host: unknown, pid: unknown, expiresAt: unknown) =>
    machineLeaseOver(
      typeof host === 'string' ? host : null,
      pid === null ? null : Number(pid),
      expiresAt === null ? null : Number(expiresAt),
    )
      ? 1
      : 0,
  );
  db.function('quarry_lease_wall', volatile, (expiresAt: unknown) =>
    expiresAt === null ? null : machineClockToWallMs(Number(expiresAt)),
  );
  return db;
}

export interface SqliteDriverOptions {
  /** `NORMAL` (default; durable across process crashes, WAL) or `FULL` (also across power loss). */
  synchronous?: 'NORMAL' | 'FULL';
  /** How long a write waits for another process's transaction, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** How often to look for commits by other processes while someone listens, in ms. Default 100. */
  pollIntervalMs?: number;
  /**
   * Create the file's folder (mode 0700) when it is missing: for Quarry's own data folder. Otherwise
   * a missing folder is `INVALID_INPUT`: a mistyped path never becomes a new, empty store.
   */
  createFolder?: boolean;
}

const dialect: SqlDialect = {
  name: 'sqlite',
  nowMs: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
  // Each process computes SQLite's times itself, on its own wall clock; leases are timed on the
  // machine's monotonic clock instead, through these functions (registered on every connection).
  leaseNowMs: 'quarry_lease_now()',
  leaseOver: '(lease_owner IS NULL OR quarry_lease_over(lease_host, lease_pid, lease_expires_at))',
  leaseExpiresAtMs: 'quarry_lease_wall(lease_expires_at)',
  writesInOneStatement: false,
  claimLock: '',
  rowLock: '',
  randomId: 'lower(hex(randomblob(16)))',
  likeOperator: 'LIKE',
  crossProcessNotifications: false,
  ownerLock: null,
};

/** Quiet time after a commit before the WAL is checkpointed, in ms. */
const CHECKPOINT_IDLE_MS = 200;
/** Under writes that never pause, a checkpoint still runs this often, in ms (the WAL stays small). */
const CHECKPOINT_MAX_INTERVAL_MS = 5_000;

/** The WAL's bound: a commit checkpoints past it, and a reset WAL file is truncated back to it. */
export const WAL_BOUND_BYTES = 16 * 1024 * 1024;

function toSqliteParam(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/**
 * Work queues per database file, shared by every connection this process opens to that file.
 * Statements are synchronous: if a second connection in the same thread waited on the busy timeout
 * while the first held a transaction open across an `await`, neither could move. So within one
 * process, transactions on a file take turns; across processes, `BEGIN IMMEDIATE` and the busy
 * timeout serialize writers.
 */
const queues = new Map<string, { tail: Promise<unknown>; users: number }>();

/** One better-sqlite3 connection; see `queues` for how its async transactions are serialized. */
export class SqliteDriver implements SqlDriver {
  readonly dialect = dialect;
  readonly fullText = fullText;
  readonly location: string;
  private readonly db: BetterSqlite3.Database;
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  private readonly emitter = new EventEmitter();
  private pollTimer: NodeJS.Timeout | null = null;
  private checkpointTimer: NodeJS.Timeout | null = null;
  private lastCheckpoint = 0;
  private lastDataVersion = 0;
  private readonly pollIntervalMs: number;
  /** Why this store cannot be changed, when it cannot. */
  private readOnly: string | null = null;
  /** The folder of the snapshot a read-only store is read from, removed on close. */
  private snapshotDir: string | null = null;
  private closed = false;

  constructor(path: string, options: SqliteDriverOptions = {}) {
    this.location = path;
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.emitter.setMaxListeners(0);
    if (path !== ':memory:' && !existsSync(dirname(path))) {
      if (!options.createFolder)
        throw new QuarryError(
          'INVALID_INPUT',
          `The folder of the store ${path} does not exist. Create it, or choose another location (--db or QUARRY_DB).`,
          { details: { field: 'db', path } },
        );
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    }
    try {
      // A new store is readable by its owner only (SQLite gives its -wal and -shm files the same mode).
      if (path !== ':memory:' && !existsSync(path)) closeSync(openSync(path, 'a', 0o600));
      this.db = this.open(path, options);
      const queue = queues.get(path) ?? { tail: Promise.resolve(), users: 0 };
      queue.users += 1;
      queues.set(path, queue);
    } catch (error) {
      if (error instanceof QuarryError) throw error;
      throw new QuarryError(
        'STORE_UNAVAILABLE',
        `Cannot open the SQLite database at ${path}: ${(error as Error).message}. Check that the folder exists and is writable, or set QUARRY_DB to another path.`,
        { details: { path }, cause: error },
      );
    }
  }

  /**
   * The connection, in WAL mode. A store in a folder this process cannot write (a shared store
   * mounted read-only, another user's) cannot keep WAL's shared-memory file there; it is read from
   * a private snapshot copy instead, so its sessions can still be listed, shown and exported.
   */
  private open(path: string, options: SqliteDriverOptions): BetterSqlite3.Database {
    // A read-only mount refuses writes even to root, whom file modes do not stop: SQLite then fails
    // with "unable to open database file" on the first read, not with a read-only error.
    if (existsSync(path) && !writable(dirname(path))) return this.openSnapshot(path);
    try {
      const db = openDatabase(path);
      this.wrapErrors(() => db.pragma('journal_mode = WAL'));
      db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
      db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
      db.pragma('foreign_keys = ON');
      // Checkpoints happen when the store is idle (see `scheduleCheckpoint`), not inside a commit:
      // SQLite's automatic one at its default 4 MB made the slowest 1% of step commits 58% of all
      // commit time. A commit still checkpoints once the WAL passes 16 MB (a busy worker that never
      // pauses wrote 95 MB of WAL in 4 s without it), and a WAL reset after a checkpoint shrinks the
      // file back to 16 MB: the WAL stays bounded however long the writing lasts.
      db.pragma(`wal_autocheckpoint = ${WAL_BOUND_BYTES / (db.pragma('page_size', { simple: true }) as number)}`);
      db.pragma(`journal_size_limit = ${WAL_BOUND_BYTES}`);
      return db;
    } catch (error) {
      const cause = error instanceof QuarryError ? error.cause : error;
      if ((cause as { code?: string }).code !== 'SQLITE_READONLY_DIRECTORY') throw error;
      return this.openSnapshot(path);
    }
  }

  /** The store read from a private snapshot copy (see `sqlite-snapshot.ts`), removed on close. */
  private openSnapshot(path: string): BetterSqlite3.Database {
    const snapshot = openSnapshot(path, openDatabase);
    this.snapshotDir = snapshot.folder;
    this.readOnly = snapshot.reason;
    return snapshot.db;
  }

  query<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.serialize(async () => this.run<T>(sql, params));
  }

  notify(channel: string, payload: string): void {
    this.emitter.emit(channel, payload);
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.serialize(async () => {
      const pending: Array<[string, string]> = [];
      const tx: SqlExecutor = {
        query: async <R>(sql: string, params: readonly unknown[] = []) => this.run<R>(sql, params),
        notify: (channel, payload) => void pending.push([channel, payload]),
      };
      this.run('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = await work(tx);
        this.run('COMMIT');
        this.scheduleCheckpoint();
      } catch (error) {
        if (this.db.inTransaction) this.run('ROLLBACK');
        throw error;
      }
      for (const [channel, payload] of pending) this.emitter.emit(channel, payload);
      return result;
    });
  }

  script(statements: readonly ScriptStatement[]): Promise<Row[][]> {
    return scriptInTransaction(this, statements);
  }

  async execScript(_tx: SqlExecutor, script: string): Promise<void> {
    this.wrapErrors(() => this.db.exec(script));
  }

  async lockForMigration(): Promise<void> {
    // BEGIN IMMEDIATE already holds the database's single write lock.
  }

  listen(channel: string, listener: (payload: string) => void): () => void {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }

  onExternalChange(listener: () => void): () => void {
    this.emitter.on('external-change', listener);
    this.startPolling();
    return () => {
      this.emitter.off('external-change', listener);
      if (this.emitter.listenerCount('external-change') === 0) this.stopPolling();
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.stopPolling();
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    const queue = queues.get(this.location);
    if (!queue || !this.db.open) return;
    await this.serialize(async () => this.db.close());
    this.closed = true;
    if (--queue.users === 0) queues.delete(this.location);
    if (this.snapshotDir) rmSync(this.snapshotDir, { recursive: true, force: true });
  }

  /**
   * Copies the WAL back into the database once writes pause for a moment (or at least every few
   * seconds under steady writing), in the store's own queue, so no commit ever waits for it. A
   * passive checkpoint never blocks other processes' readers or writers.
   */
  private scheduleCheckpoint(): void {
    if (this.readOnly) return;
    const due = Date.now() - this.lastCheckpoint > CHECKPOINT_MAX_INTERVAL_MS;
    if (this.checkpointTimer && !due) {
      this.checkpointTimer.refresh();
      return;
    }
    if (this.checkpointTimer) return;
    this.checkpointTimer = setTimeout(
      () => {
        this.checkpointTimer = null;
        this.lastCheckpoint = Date.now();
        void this.serialize(async () => {
          if (this.db.open) this.db.pragma('wal_checkpoint(PASSIVE)');
        }).catch(() => undefined);
      },
      due ? 0 : CHECKPOINT_IDLE_MS,
    );
    this.checkpointTimer.unref();
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const queue = queues.get(this.location);
    if (this.closed || !queue) return Promise.reject(storeClosed(this.location));
    const next = queue.tail.then(work, work);
    queue.tail = next.catch(() => undefined);
    return next;
  }

  private run<T>(sql: string, params: readonly unknown[] = []): T[] {
    if (!this.db.open) throw storeClosed(this.location);
    return this.wrapErrors(() => {
      let statement = this.statements.get(sql);
      if (!statement) {
        statement = this.db.prepare(sql);
        this.statements.set(sql, statement);
      }
      const values = params.map(toSqliteParam);
      if (statement.reader) return statement.all(...values) as T[];
      statement.run(...values);
      return [];
    });
  }

  private wrapErrors<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw this.mapError(error);
    }
  }

  /** SQLite's failures as the store's errors, with what an operator can do about each. */
  private mapError(error: unknown): unknown {
    const code = (error as { code?: string }).code ?? '';
    const message = (error as Error).message ?? String(error);
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      return new QuarryError('STORE_BUSY', `The SQLite database at ${this.location} is busy; try again.`, {
        isRetryable: true,
        cause: error,
      });
    }
    if (code.startsWith('SQLITE_READONLY')) {
      return new QuarryError(
        'STORE_UNAVAILABLE',
        `The store at ${this.location} is read-only (${this.readOnly ?? message}): its sessions can be listed, shown and exported, not changed.`,
        { details: { path: this.location, readOnly: true }, cause: error },
      );
    }
    if (
      code.startsWith('SQLITE_CORRUPT') ||
      code === 'SQLITE_NOTADB' ||
      /vtable constructor failed|malformed/i.test(message)
    ) {
      return new QuarryError(
        'STORE_CORRUPT',
        `The store at ${this.location} is damaged: ${code === 'SQLITE_NOTADB' ? 'the file is not a SQLite database' : this.integrityReport(message)}. Restore it from a backup, or export what can still be read (quarry export) into a new store.`,
        { details: { path: this.location }, cause: error },
      );
    }
    if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR')) {
      return new QuarryError(
        'STORE_UNAVAILABLE',
        `Cannot write the SQLite database at ${this.location}: ${message}${code === 'SQLITE_FULL' ? ' (the disk is full: free space, then resume)' : code.startsWith('SQLITE_IOERR') ? ' (is the disk full or failing?)' : ''}.`,
        { details: { path: this.location }, cause: error },
      );
    }
    return error;
  }

  /** What SQLite's own integrity check says, in its words (the first few findings). */
  private integrityReport(fallback: string): string {
    try {
      const rows = this.db.pragma('quick_check(5)') as { quick_check: string }[];
      const findings = rows
        .flatMap((row) => row.quick_check.split('\n'))
        .filter((finding) => finding !== 'ok' && !finding.startsWith('***'));
      return findings.length ? `the integrity check reports: ${findings.join('; ')}` : fallback;
    } catch {
      return fallback;
    }
  }

  private startPolling(): void {
    if (this.pollTimer) return;
    this.lastDataVersion = this.db.pragma('data_version', { simple: true }) as number;
    this.pollTimer = setInterval(() => {
      if (!this.db.open) return;
      // data_version changes only when another connection commits.
      const version = this.db.pragma('data_version', { simple: true }) as number;
      if (version !== this.lastDataVersion) {
        this.lastDataVersion = version;
        this.emitter.emit('external-change');
      }
    }, this.pollIntervalMs);
    this.pollTimer.unref();
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
  }
}
