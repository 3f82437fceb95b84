/**
 * The seam between the shared SQL store and a database: each backend folder (`sqlite/`,
 * `postgres/`) provides one `SqlDriver`. All SQL in `sql/` is written once with `?` placeholders;
 * differences between databases are the dialect's fields, never `if (backend === …)` in the store.
 */

export type Row = Record<string, unknown>;

export interface SqlExecutor {
  /** Runs one statement with `?` placeholders; returns its rows (empty for statements without any). */
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Queues a notification, delivered to listeners in every process once the transaction commits. */
  notify(channel: string, payload: string): void;
}

export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /** SQL expression for the database clock in integer milliseconds since the epoch. */
  readonly nowMs: string;
  /**
   * SQL expression for the clock leases are timed on, in ms: the database clock where the database
   * has one (PostgreSQL), else a clock every process on the machine shares (SQLite).
   */
  readonly leaseNowMs: string;
  /** SQL predicate over a `sessions` row: it holds no lease, or its lease is over. */
  readonly leaseOver: string;
  /** SQL expression for a `sessions` row's lease expiry in ms since the epoch. */
  readonly leaseExpiresAtMs: string;
  /** Appended to a SELECT that picks a row to claim: skip rows other transactions are claiming. */
  readonly claimLock: string;
  /**
   * Appended to a SELECT whose row must not change or go until the transaction ends (` FOR UPDATE`),
   * or '' where write transactions already take turns (SQLite).
   */
  readonly rowLock: string;
  /** SQL expression for a fresh random text id (copies made inside one statement). */
  readonly randomId: string;
  /** Case-insensitive LIKE operator. */
  readonly likeOperator: string;
  /** True when notifications reach other processes (otherwise the store polls for changes). */
  readonly crossProcessNotifications: boolean;
  /**
   * A statement taking an owner id that locks that owner until the transaction ends (limits are
   * counted under it), or null where write transactions already take turns (SQLite).
   */
  readonly ownerLock: string | null;
  /**
   * True where several writes can be one statement of data-modifying CTEs (`WITH a AS (INSERT …)
   * INSERT …`), atomic by itself and one round trip (PostgreSQL); false where they are a transaction.
   */
  readonly writesInOneStatement: boolean;
}

/** A passage as the full-text dialect writes it. */
export interface PassageRow {
  position: number;
  start: number;
  end: number;
  text: string;
  headings: string;
  linkDensity: number;
  /** What the headings field of the full-text index holds: the path, and every heading inside the passage. */
  headingField: string;
  /** What the text field of the full-text index holds: the text, and its symbols as words (`symbolTerms`). */
  searchText: string;
}

/** How a backend indexes and searches passage text; the one place full-text SQL differs. */
export interface FullTextDialect {
  /**
   * Inserts a document's passages and their full-text entries: few statements for many rows (a
   * multi-row INSERT per batch), with title, headings and text as separately weighted fields.
   */
  insertPassages(
    tx: SqlExecutor,
    document: { id: number; title: string },
    passages: readonly PassageRow[],
  ): Promise<void>;
  /** Removes a document's passages from the full-text index (before the rows are deleted). */
  unindexDocument(tx: SqlExecutor, documentId: number): Promise<void>;
  /**
   * A query over `corpus_passages p JOIN corpus_documents d` returning the passage columns, the
   * document's `navigation` flag and a `score` (higher is better), for `terms` (lower-case words);
   * `filter` is an extra WHERE clause.
   */
  searchSql(filter: string): string;
  /** The parameters that precede the filter's own in `searchSql`. */
  searchParams(terms: string[]): unknown[];
  /**
   * A query counting, for each of `terms` terms, the passages that contain it, in one statement (one
   * round trip): a row per term with `i`, its position, and `n`, at most `FREQUENCY_CAP`. Its
   * parameters are each term's `searchParams([term])`, in order.
   */
  countSql(terms: number): string;
  /** A statement that refreshes the planner's statistics about the index, after indexing. */
  readonly refreshStatisticsSql: string;
}

/** One statement of a script (`SqlDriver.script`), with `?` placeholders. */
export interface ScriptStatement {
  sql: string;
  params: readonly unknown[];
  /**
   * A channel: the statement is a SELECT whose rows each have a `payload`, and each payload is sent
   * on this channel once the script commits (as `notify` does), instead of being returned.
   */
  notify?: string;
}

export interface SqlDriver extends SqlExecutor {
  readonly fullText: FullTextDialect;
  readonly dialect: SqlDialect;
  /** Human-readable location: the file path or the connection string without password. */
  readonly location: string;
  /**
   * Runs `work` in one write transaction (SQLite `BEGIN IMMEDIATE`; PostgreSQL READ COMMITTED with
   * explicit row locks). Commits when it resolves, rolls back when it throws.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * Runs `statements` as one transaction with no code between them, and returns each one's rows in
   * order (none for a `notify` statement). Each statement sees what committed before it began: a
   * first statement that locks a row gives every later one a current view of what that lock guards.
   * So a write whose steps depend on each other says so in SQL (each statement's condition reads
   * what the ones before it wrote), and runs as one. PostgreSQL sends the whole script in one round
   * trip (each statement prepared once per connection, then executed with its values as literals);
   * SQLite runs it as a transaction, in order. All of it lands or none; a script whose connection is
   * lost after it was sent may have landed (as a lost COMMIT may), and that reaches the caller.
   */
  script(statements: readonly ScriptStatement[]): Promise<Row[][]>;
  /** Runs a multi-statement script (migrations) inside the given transaction. */
  execScript(tx: SqlExecutor, script: string): Promise<void>;
  /**
   * Holds a database-wide lock for the duration of the transaction (migrations), and creates the
   * store's namespace if it has none yet (PostgreSQL's schema).
   */
  lockForMigration(tx: SqlExecutor): Promise<void>;
  /** Subscribes to a notification channel; returns the unsubscribe function. */
  listen(channel: string, listener: (payload: string) => void): () => void;
  /** Called when another process may have committed changes (only for drivers without cross-process notifications). */
  onExternalChange(listener: () => void): () => void;
  close(): Promise<void>;
}
