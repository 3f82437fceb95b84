import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { QuarryError } from '../errors.ts';
import type { FullTextDialect, Row, SqlDialect, SqlDriver, SqlExecutor } from '../sql/sql-driver.ts';

export interface SqliteDriverOptions {
  /** `NORMAL` (default; durable across process crashes, WAL) or `FULL` (also across power loss). */
  synchronous?: 'NORMAL' | 'FULL';
  /** How long a write waits for another process's transaction, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** How often to look for commits by other processes while someone listens, in ms. Default 100. */
  pollIntervalMs?: number;
}

const dialect: SqlDialect = {
  name: 'sqlite',
  nowMs: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
  claimLock: '',
  randomId: 'lower(hex(randomblob(16)))',
  likeOperator: 'LIKE',
  crossProcessNotifications: false,
};

/** Rows per multi-row INSERT (SQLite allows 32,766 bound values). */
const PASSAGE_BATCH = 500;

/**
 * FTS5 over a contentless table whose rowid is the passage id, with text, title and headings as
 * columns; bm25() weighs a title match 4 times and a heading match 2.5 times a body match.
 */
const fullText: FullTextDialect = {
  async insertPassages(tx, document, passages) {
    for (let from = 0; from < passages.length; from += PASSAGE_BATCH) {
      const batch = passages.slice(from, from + PASSAGE_BATCH);
      const rows = await tx.query<{ id: number }>(
        `INSERT INTO corpus_passages (document_id, position, start_offset, end_offset, headings, link_density, text)
         VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')} RETURNING id`,
        batch.flatMap((passage) => [
          document.id,
          passage.position,
          passage.start,
          passage.end,
          passage.headings,
          passage.linkDensity,
          passage.text,
        ]),
      );
      // RETURNING follows the VALUES order for a plain multi-row INSERT.
      await tx.query(
        `INSERT INTO corpus_fts (rowid, text, title, headings) VALUES ${batch.map(() => '(?, ?, ?, ?)').join(', ')}`,
        batch.flatMap((passage, index) => [
          Number(rows[index]!.id),
          passage.text,
          document.title,
          passage.headingField,
        ]),
      );
    }
  },
  async unindexDocument(tx, documentId) {
    await tx.query('DELETE FROM corpus_fts WHERE rowid IN (SELECT id FROM corpus_passages WHERE document_id = ?)', [
      documentId,
    ]);
  },
  searchSql: (filter) => `SELECT p.id AS passage_id, p.document_id, p.position, p.start_offset, p.end_offset, p.text,
      p.headings, p.link_density, d.path, d.title, d.navigation, -bm25(corpus_fts, 1.0, 4.0, 2.5) AS score
    FROM corpus_fts JOIN corpus_passages p ON p.id = corpus_fts.rowid JOIN corpus_documents d ON d.id = p.document_id
    WHERE corpus_fts MATCH ?${filter} ORDER BY bm25(corpus_fts, 1.0, 4.0, 2.5), p.id LIMIT ?`,
  // Each term quoted, so query text can never be read as FTS5 syntax.
  searchParams: (terms) => [terms.map((term) => `"${term}"`).join(' OR ')],
  countSql: 'SELECT COUNT(*) AS n FROM corpus_fts WHERE corpus_fts MATCH ?',
};

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
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly emitter = new EventEmitter();
  private pollTimer: NodeJS.Timeout | null = null;
  private lastDataVersion = 0;
  private readonly pollIntervalMs: number;

  constructor(path: string, options: SqliteDriverOptions = {}) {
    this.location = path;
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.emitter.setMaxListeners(0);
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.db = new Database(path);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
      this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
      this.db.pragma('foreign_keys = ON');
      const queue = queues.get(path) ?? { tail: Promise.resolve(), users: 0 };
      queue.users += 1;
      queues.set(path, queue);
    } catch (error) {
      throw new QuarryError(
        'STORE_UNAVAILABLE',
        `Cannot open the SQLite database at ${path}: ${(error as Error).message}. Check that the folder exists and is writable, or set QUARRY_DB to another path.`,
        { details: { path }, cause: error },
      );
    }
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
      } catch (error) {
        if (this.db.inTransaction) this.run('ROLLBACK');
        throw error;
      }
      for (const [channel, payload] of pending) this.emitter.emit(channel, payload);
      return result;
    });
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
    this.stopPolling();
    const queue = queues.get(this.location);
    if (!queue || !this.db.open) return;
    await this.serialize(async () => this.db.close());
    if (--queue.users === 0) queues.delete(this.location);
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const queue = queues.get(this.location)!;
    const next = queue.tail.then(work, work);
    queue.tail = next.catch(() => undefined);
    return next;
  }

  private run<T>(sql: string, params: readonly unknown[] = []): T[] {
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
      const code = (error as { code?: string }).code ?? '';
      if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
        throw new QuarryError('STORE_BUSY', `The SQLite database at ${this.location} is busy; try again.`, {
          isRetryable: true,
          cause: error,
        });
      }
      if (
        code === 'SQLITE_READONLY' ||
        code === 'SQLITE_CANTOPEN' ||
        code === 'SQLITE_FULL' ||
        code === 'SQLITE_IOERR'
      ) {
        throw new QuarryError(
          'STORE_UNAVAILABLE',
          `Cannot write the SQLite database at ${this.location}: ${(error as Error).message}.`,
          {
            details: { path: this.location },
            cause: error,
          },
        );
      }
      throw error;
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
