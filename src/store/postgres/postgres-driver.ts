import pg from 'pg';
import { QuarryError } from '../errors.ts';
import type { FullTextDialect, Row, SqlDialect, SqlDriver, SqlExecutor } from '../sql/sql-driver.ts';

export interface PostgresDriverOptions {
  /** Schema for Quarry's tables (created if missing). Default `public`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
}

const dialect: SqlDialect = {
  name: 'postgres',
  nowMs: '(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint',
  claimLock: ' FOR UPDATE SKIP LOCKED',
  randomId: 'gen_random_uuid()::text',
  likeOperator: 'ILIKE',
  crossProcessNotifications: true,
};

/** A stored tsvector (title weighted A, text D) with a GIN index; ranked by ts_rank, length-normalized. */
const fullText: FullTextDialect = {
  async indexPassage(tx, passage) {
    await tx.query("UPDATE corpus_passages SET tsv = setweight(to_tsvector('english', ?), 'A') || setweight(to_tsvector('english', ?), 'D') WHERE id = ?", [
      passage.title,
      passage.text,
      passage.id,
    ]);
  },
  async unindexDocument() {
    // The tsvector lives on the passage rows and goes with them.
  },
  searchSql: (filter) => `SELECT p.id AS passage_id, p.document_id, p.position, p.start_offset, p.end_offset, p.text, d.path, d.title,
      ts_rank(p.tsv, q, 1) AS score
    FROM corpus_passages p JOIN corpus_documents d ON d.id = p.document_id, to_tsquery('english', ?) q
    WHERE p.tsv @@ q${filter} ORDER BY score DESC, p.id LIMIT ?`,
  // Terms are letters and digits only (the caller's tokenizer), quoted as tsquery lexemes.
  searchParams: (terms) => [terms.map((term) => `'${term}'`).join(' | ')],
};

const INT8_OID = 20;
const NUMERIC_OID = 1700;

// BIGINT columns hold millisecond times and counters, all far below 2^53.
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID || oid === NUMERIC_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Rewrites `?` placeholders to `$1, $2…`, leaving quoted text alone. */
export function toPostgresPlaceholders(sql: string): string {
  let index = 0;
  let quoted = false;
  let result = '';
  for (const char of sql) {
    if (char === "'") quoted = !quoted;
    result += char === '?' && !quoted ? `$${++index}` : char;
  }
  return result;
}

export function redactConnectionString(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable connection string)';
  }
}

function mapPostgresError(error: unknown, location: string): unknown {
  const code = (error as { code?: string }).code ?? '';
  if (code === '40001' || code === '40P01' || code === '55P03') {
    return new QuarryError('STORE_BUSY', `PostgreSQL reported a conflict (${code}); try again.`, { isRetryable: true, cause: error });
  }
  if (['ECONNREFUSED', 'ENOTFOUND', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P03', '08006', '08001', '3D000', '28P01', '28000'].includes(code)) {
    return new QuarryError('STORE_UNAVAILABLE', `Cannot reach PostgreSQL at ${location}: ${(error as Error).message}.`, {
      isRetryable: !code.startsWith('28') && code !== '3D000',
      details: { location },
      cause: error,
    });
  }
  return error;
}

export class PostgresDriver implements SqlDriver {
  readonly dialect = dialect;
  readonly fullText = fullText;
  readonly location: string;
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly connectionString: string;
  private listener: pg.Client | null = null;
  private listenerReady: Promise<pg.Client> | null = null;
  private readonly channels = new Map<string, Set<(payload: string) => void>>();
  private closed = false;

  constructor(connectionString: string, options: PostgresDriverOptions = {}) {
    this.connectionString = connectionString;
    this.location = redactConnectionString(connectionString);
    this.schema = options.schema ?? 'public';
    if (!/^[a-z_][a-z0-9_]{0,40}$/.test(this.schema)) {
      throw new QuarryError('INVALID_INPUT', `Invalid PostgreSQL schema name "${this.schema}".`, { details: { field: 'schema' } });
    }
    this.pool = new pg.Pool({
      connectionString,
      max: options.maxConnections ?? 10,
      types,
      options: `-c search_path=${this.schema}`,
    });
    // An idle client's connection error must not crash the process; the next query reports it.
    this.pool.on('error', () => undefined);
  }

  /** Creates the schema if needed; call once before use. */
  async connect(): Promise<void> {
    try {
      const client = await this.pool.connect();
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
      } finally {
        client.release();
      }
    } catch (error) {
      const mapped = mapPostgresError(error, this.location);
      if (mapped instanceof QuarryError) throw mapped;
      throw new QuarryError('STORE_UNAVAILABLE', `Cannot open PostgreSQL at ${this.location}: ${(error as Error).message}.`, {
        details: { location: this.location },
        cause: error,
      });
    }
  }

  async query<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    try {
      const result = await this.pool.query(toPostgresPlaceholders(sql), params as unknown[]);
      return result.rows as T[];
    } catch (error) {
      throw mapPostgresError(error, this.location);
    }
  }

  notify(channel: string, payload: string): void {
    void this.pool.query('SELECT pg_notify($1, $2)', [this.channelName(channel), payload]).catch(() => undefined);
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw mapPostgresError(error, this.location);
    }
    const pending: Array<[string, string]> = [];
    const tx: SqlExecutor = {
      query: async <R>(sql: string, params: readonly unknown[] = []) => {
        const result = await client.query(toPostgresPlaceholders(sql), params as unknown[]);
        return result.rows as R[];
      },
      notify: (channel, payload) => void pending.push([channel, payload]),
    };
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await work(tx);
      for (const [channel, payload] of pending) {
        await client.query('SELECT pg_notify($1, $2)', [this.channelName(channel), payload]);
      }
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw mapPostgresError(error, this.location);
    } finally {
      client.release(broken);
    }
  }

  async execScript(tx: SqlExecutor, script: string): Promise<void> {
    // Scripts have no placeholders; the simple query protocol runs several statements at once.
    await tx.query(script);
  }

  async lockForMigration(tx: SqlExecutor): Promise<void> {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('quarry-migrations-' || current_schema()))");
  }

  listen(channel: string, listener: (payload: string) => void): () => void {
    const name = this.channelName(channel);
    let set = this.channels.get(name);
    if (!set) {
      set = new Set();
      this.channels.set(name, set);
      void this.ensureListener().then((client) => client.query(`LISTEN "${name}"`)).catch(() => undefined);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  onExternalChange(): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const listener = this.listener;
    this.listener = null;
    if (listener) await listener.end().catch(() => undefined);
    await this.pool.end();
  }

  private channelName(channel: string): string {
    return `${this.schema}_${channel}`;
  }

  private ensureListener(): Promise<pg.Client> {
    if (this.listenerReady) return this.listenerReady;
    const client = new pg.Client({ connectionString: this.connectionString });
    this.listenerReady = client.connect().then(() => {
      this.listener = client;
      client.on('notification', (message) => {
        for (const listener of this.channels.get(message.channel) ?? []) listener(message.payload ?? '');
      });
      client.on('error', () => this.reconnectListener());
      return client;
    });
    this.listenerReady.catch(() => this.reconnectListener());
    return this.listenerReady;
  }

  private reconnectListener(): void {
    if (this.closed) return;
    this.listener = null;
    this.listenerReady = null;
    setTimeout(() => {
      if (this.closed || this.channels.size === 0) return;
      void this.ensureListener()
        .then(async (client) => {
          for (const name of this.channels.keys()) await client.query(`LISTEN "${name}"`);
          // Anything sent while disconnected was missed: tell every listener to look.
          for (const set of this.channels.values()) for (const listener of set) listener('');
        })
        .catch(() => undefined);
    }, 500).unref();
  }
}
