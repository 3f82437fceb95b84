import type { Client, ClientBase, Pool, PoolClient, QueryConfig } from 'pg';
import pg from 'pg';
import { type Clock, systemClock } from '../../shared/clock.ts';
import { raceAbort } from '../../shared/concurrency.ts';
import { isQuarryError, isRetryable, QuarryError, storeClosed } from '../../shared/errors.ts';
import { reportOperation } from '../../shared/operations.ts';
import type { Row, ScriptStatement, SqlDialect, SqlDriver, SqlExecutor } from '../sql/sql-driver.ts';
import { fullText } from './postgres-full-text.ts';
import { runScript, toPostgresPlaceholders } from './postgres-script.ts';

export interface PostgresDriverOptions {
  /** Schema for Quarry's tables (created if missing). Default `public`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /**
   * Waits between tries of a statement or transaction that met a restarting or unreachable server,
   * where trying again is safe. Default about 12 seconds in all; longer outages reach the caller.
   */
  reconnectDelaysMs?: readonly number[];
  clock?: Clock;
}

const RECONNECT_DELAYS_MS = [250, 500, 1_000, 2_000, 4_000, 4_000];
/**
 * How long one statement may go unanswered before its connection is given up: a server behind a
 * silent network (no reset, no error) would otherwise hold a request, and the client waiting on it,
 * until TCP gave up hours later. Long enough for any statement Quarry sends outside a migration.
 */
const STATEMENT_WAIT_MS = 30_000;
/** A migration's statements (an index built over a large corpus, waiting for another process's migration) may take long. */
const MIGRATION_WAIT_MS = 30 * 60_000;
/** pg's message when `query_timeout` passed. */
const QUERY_TIMED_OUT = 'Query read timeout';

const timedOut = (error: unknown) => error instanceof Error && error.message === QUERY_TIMED_OUT;

/** How long `close` waits for the server to see its connections off before cutting them. */
const CLOSE_GRACE_MS = 2_000;

/** A statement that only reads: running it again after a lost connection changes nothing. */
function isReadOnly(sql: string): boolean {
  return (
    /^\s*SELECT\b/i.test(sql) && !/\b(INSERT|UPDATE|DELETE)\b|FOR UPDATE|pg_notify|nextval|quarry_\w+\(/i.test(sql)
  );
}

/** An error that happened before the statement reached the server: always safe to try again. */
class NotSent extends Error {
  constructor(readonly error: unknown) {
    super('not sent');
  }
}

const dialect: SqlDialect = {
  name: 'postgres',
  nowMs: '(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint',
  leaseNowMs: '(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint',
  leaseOver:
    '(lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at < (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint)',
  leaseExpiresAtMs: 'lease_expires_at',
  writesInOneStatement: true,
  claimLock: ' FOR UPDATE SKIP LOCKED',
  rowLock: ' FOR UPDATE',
  randomId: 'gen_random_uuid()::text',
  likeOperator: 'ILIKE',
  crossProcessNotifications: true,
  ownerLock: "SELECT pg_advisory_xact_lock(hashtext('quarry owner'), hashtext(?)) AS locked",
};

const INT8_OID = 20;
const NUMERIC_OID = 1700;

// BIGINT columns hold millisecond times and counters, all far below 2^53.
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID || oid === NUMERIC_OID
      ? Number
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export function redactConnectionString(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable connection string)';
  }
}

/** Failures of the connection itself (no SQLSTATE): a restarted or unreachable server. */
const lostConnection =
  /Connection terminated|connection error|not queryable|socket hang up|read ECONNRESET|write EPIPE|timeout exceeded when trying to connect|Query read timeout/i;

function mapPostgresError(error: unknown, location: string): unknown {
  if (error instanceof QuarryError) return error;
  const code = (error as { code?: string }).code ?? '';
  if (code === '40001' || code === '40P01' || code === '55P03') {
    return new QuarryError('STORE_BUSY', `PostgreSQL reported a conflict (${code}); try again.`, {
      isRetryable: true,
      cause: error,
    });
  }
  if (
    [
      'ECONNREFUSED',
      'ENOTFOUND',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'EHOSTUNREACH',
      'ECONNABORTED',
      '57P01', // terminating connection due to administrator command (a restart)
      '57P02', // crash shutdown
      '57P03', // the database system is starting up / shutting down
      '08000',
      '08003',
      '08006',
      '08001',
      '3D000',
      '28P01',
      '28000',
    ].includes(code) ||
    (!code && error instanceof Error && lostConnection.test(error.message))
  ) {
    return new QuarryError(
      'STORE_UNAVAILABLE',
      `Cannot reach PostgreSQL at ${location}: ${(error as Error).message}.`,
      {
        isRetryable: !code.startsWith('28') && code !== '3D000',
        details: { location },
        cause: error,
      },
    );
  }
  return error;
}

/** A transaction's executor, with a way to run a migration's statements without the usual wait. */
interface PostgresExecutor extends SqlExecutor {
  queryLong(text: string, values?: readonly unknown[]): Promise<void>;
}

export class PostgresDriver implements SqlDriver {
  readonly dialect = dialect;
  readonly fullText = fullText;
  readonly location: string;
  readonly schema: string;
  private readonly pool: Pool;
  private readonly connectionString: string;
  /** The notification connection, from the moment it starts connecting (so `close` can end it then too). */
  private listener: Client | null = null;
  private listenerReady: Promise<Client> | null = null;
  private readonly channels = new Map<string, Set<(payload: string) => void>>();
  private closed = false;
  /** Statements as sent, by their `?` text (placeholders rewritten once). */
  private readonly statements = new Map<string, { text: string }>();
  /** Connections that reported an error; released ones are ended, never handed out again. */
  private readonly broken = new WeakSet<ClientBase>();
  /** The pool's connections from the moment each starts connecting, so `close` can cut those that no longer answer. */
  private readonly connections = new Set<Client>();
  private readonly reconnectDelaysMs: readonly number[];
  private readonly clock: Clock;

  constructor(connectionString: string, options: PostgresDriverOptions = {}) {
    this.connectionString = connectionString;
    this.location = redactConnectionString(connectionString);
    this.schema = options.schema ?? 'public';
    this.reconnectDelaysMs = options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS;
    this.clock = options.clock ?? systemClock;
    if (!/^[a-z_][a-z0-9_]{0,40}$/.test(this.schema)) {
      throw new QuarryError('INVALID_INPUT', `Invalid PostgreSQL schema name "${this.schema}".`, {
        details: { field: 'schema' },
      });
    }
    const connections = this.connections;
    this.pool = new pg.Pool({
      connectionString,
      Client: class extends pg.Client {
        constructor(config?: ConstructorParameters<typeof pg.Client>[0]) {
          super(config);
          connections.add(this);
          this.once('end', () => connections.delete(this));
        }
      },
      max: options.maxConnections ?? 10,
      // An unreachable server fails a query in ten seconds instead of holding it forever, and one
      // that stops answering fails its statement in STATEMENT_WAIT_MS.
      connectionTimeoutMillis: 10_000,
      query_timeout: STATEMENT_WAIT_MS,
      types,
      // Plans priced for data in memory, as a store's working set is: with the default cost of a
      // random page (4, a disk seek), the planner reads a corpus's whole table when a search's words
      // match a fifth of its passages, and the bitmap over the index is twice as fast (searching
      // Python's documentation with 62 questions: 28 -> 15 ms median, p95 51 -> 26 ms).
      options: `-c search_path=${this.schema} -c random_page_cost=1.1`,
    });
    // An idle client's connection error must not crash the process; the next query reports it.
    this.pool.on('error', () => undefined);
    // Every connection is heard from the moment it connects, checked out or not: a server that is
    // shutting down can end a connection in the same packet that completed it, before the code that
    // checked it out runs, and an unheard 'error' event ends the process. A broken one is dropped.
    this.pool.on('connect', (client) => {
      client.on('error', () => this.broken.add(client));
    });
  }

  /**
   * Opens the first connection (or `connections` of them, left ready in the pool), so an
   * unreachable server fails here with a clear error; call once before use. The schema is created by
   * the migrations (`lockForMigration`), which run only when a store is new or older than this code.
   */
  async connect(connections = 1): Promise<void> {
    try {
      const opened = await Promise.allSettled(Array.from({ length: connections }, () => this.pool.connect()));
      for (const each of opened) if (each.status === 'fulfilled') each.value.release();
      for (const each of opened) if (each.status === 'rejected') throw each.reason;
    } catch (error) {
      const mapped = mapPostgresError(error, this.location);
      if (mapped instanceof QuarryError) throw mapped;
      throw new QuarryError(
        'STORE_UNAVAILABLE',
        `Cannot open PostgreSQL at ${this.location}: ${(error as Error).message}.`,
        {
          details: { location: this.location },
          cause: error,
        },
      );
    }
  }

  async query<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    if (this.closed) throw storeClosed(this.location);
    const readOnly = isReadOnly(sql);
    return this.reconnecting(async () => {
      const client = await this.checkOut();
      let failed = false;
      try {
        return (await client.query({ ...this.statement(sql), values: params as unknown[] })).rows as T[];
      } catch (error) {
        failed = !(error as { code?: string }).code;
        const mapped = mapPostgresError(error, this.location);
        // A read can be sent again; a write whose reply was lost may have landed, so the caller
        // decides. A statement that went unanswered is not sent again here: it would wait as long.
        throw readOnly && isRetryable(mapped) && !timedOut(error) ? new NotSent(mapped) : mapped;
      } finally {
        client.release(failed || this.broken.has(client));
      }
    });
  }

  /**
   * The statement to send for `sql`, its `?` placeholders as PostgreSQL's `$n`; texts are cached
   * while there is room (some are built per call: IN lists, term counts).
   */
  private statement(sql: string): { text: string } {
    let statement = this.statements.get(sql);
    if (statement) return statement;
    statement = { text: toPostgresPlaceholders(sql) };
    if (this.statements.size < 1_000) this.statements.set(sql, statement);
    return statement;
  }

  /**
   * A pooled, live connection; failing to get one is a `NotSent` (nothing reached the server), and
   * so is one the server ended as it was handed over.
   */
  private async checkOut(): Promise<PoolClient> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      const mapped = mapPostgresError(error, this.location);
      throw isRetryable(mapped) ? new NotSent(mapped) : mapped;
    }
    if (!this.broken.has(client)) return client;
    client.release(true);
    throw new NotSent(mapPostgresError(new Error('Connection terminated as it opened'), this.location));
  }

  /**
   * Runs `attempt` again after a lost or refused connection when what failed is safe to repeat (it
   * throws `NotSent`), waiting a little longer each time; a server away for longer than the delays
   * reaches the caller as a retryable `STORE_UNAVAILABLE`, for its own retry policy.
   */
  private async reconnecting<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tries = 0; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof NotSent)) throw error;
        const delay = this.reconnectDelaysMs[tries];
        if (delay === undefined || this.closed) throw error.error;
        const mapped = error.error;
        reportOperation({ type: 'store-retry', code: isQuarryError(mapped) ? mapped.code : 'STORE_UNAVAILABLE' });
        await this.clock.sleep(delay);
      }
    }
  }

  notify(channel: string, payload: string): void {
    void this.pool.query('SELECT pg_notify($1, $2)', [this.channelName(channel), payload]).catch(() => undefined);
  }

  /**
   * Runs `work` in a transaction. A connection lost before COMMIT was sent rolled the transaction
   * back on the server, so the whole transaction is run again (on a new connection); one lost during
   * COMMIT may or may not have landed, and reaches the caller.
   */
  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    if (this.closed) throw storeClosed(this.location);
    return this.reconnecting(() => this.transactionOnce(work));
  }

  private async transactionOnce<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.checkOut();
    // A connection that dies while the transaction's own code runs (no query in flight) is marked
    // broken by the pool's listener; the next query fails instead.
    let broken = false;
    const pending: Array<[string, string]> = [];
    const tx: PostgresExecutor = {
      query: async <R>(sql: string, params: readonly unknown[] = []) => {
        const result = await client.query(toPostgresPlaceholders(sql), params as unknown[]);
        return result.rows as R[];
      },
      queryLong: async (text, values = []) => {
        // pg reads a statement's own `query_timeout` before the connection's (its types omit it).
        const statement = { text, values: values as unknown[], query_timeout: MIGRATION_WAIT_MS };
        await client.query(statement as QueryConfig);
      },
      notify: (channel, payload) => void pending.push([channel, payload]),
    };
    let committing = false;
    try {
      await client.query('BEGIN');
      const result = await work(tx);
      committing = true;
      // The notifications go with COMMIT, in one round trip (a simple query, so its values are
      // written as literals); PostgreSQL delivers them only if the transaction commits.
      const notifications = pending.map(
        ([channel, payload]) =>
          `SELECT pg_notify(${client.escapeLiteral(this.channelName(channel))}, ${client.escapeLiteral(payload)});`,
      );
      await client.query(`${notifications.join(' ')} COMMIT`);
      return result;
    } catch (error) {
      // A statement that went unanswered still holds the connection: it is dropped (the server rolls
      // back once it notices), never asked to roll back behind it.
      if (timedOut(error)) broken = true;
      else
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
      // A database error before COMMIT rolled everything back: safe to run again. The transaction's
      // own refusals (Quarry errors, some retryable for their caller, such as a limit) are final here.
      if (isQuarryError(error)) throw error;
      const mapped = mapPostgresError(error, this.location);
      throw !committing && isRetryable(mapped) && !timedOut(error) ? new NotSent(mapped) : mapped;
    } finally {
      client.release(broken || this.broken.has(client));
    }
  }

  async script(statements: readonly ScriptStatement[]): Promise<Row[][]> {
    if (this.closed) throw storeClosed(this.location);
    return this.reconnecting(async () => {
      const client = await this.checkOut();
      let failed = false;
      try {
        return await runScript(client, statements, (channel) => this.channelName(channel));
      } catch (error) {
        // Ended, never reused: its transaction may be open and what it prepared is unknown. A lost
        // connection may have committed the script, so the caller decides (never sent again here).
        failed = true;
        throw mapPostgresError(error, this.location);
      } finally {
        client.release(failed || this.broken.has(client));
      }
    });
  }

  async execScript(tx: SqlExecutor, script: string): Promise<void> {
    // Scripts have no placeholders; the simple query protocol runs several statements at once.
    await (tx as PostgresExecutor).queryLong(script);
  }

  async lockForMigration(tx: SqlExecutor): Promise<void> {
    // Keyed by the schema's name (current_schema() is null until the schema exists), then the schema
    // is created under the lock, so two processes opening a new store never race to create it.
    await (tx as PostgresExecutor).queryLong('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `quarry-migrations-${this.schema}`,
    ]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
  }

  listen(channel: string, listener: (payload: string) => void): () => void {
    const name = this.channelName(channel);
    let set = this.channels.get(name);
    if (!set) {
      set = new Set();
      this.channels.set(name, set);
      void this.ensureListener()
        .then((client) => client.query(`LISTEN "${name}"`))
        .catch(() => undefined);
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
    if (this.closed) return;
    this.closed = true;
    const listener = this.listener;
    this.listener = null;
    // Ends it even while it is still connecting (a command that printed and closes must exit).
    const ended = Promise.all([listener?.end().catch(() => undefined), this.pool.end()]);
    const answered = await raceAbort(ended, AbortSignal.timeout(CLOSE_GRACE_MS)).then(
      () => true,
      () => false,
    );
    if (answered) return;
    // A server that stopped answering (a silent network partition) never says goodbye, and a query
    // still waiting on it never gives its connection back: their sockets are closed from this side.
    for (const client of [...this.connections, listener]) client?.connection.stream.destroy();
    ended.catch(() => undefined);
  }

  private channelName(channel: string): string {
    return `${this.schema}_${channel}`;
  }

  private ensureListener(): Promise<Client> {
    if (this.listenerReady) return this.listenerReady;
    const client = new pg.Client({ connectionString: this.connectionString });
    this.listener = client;
    // Heard from the start: a server that is shutting down can end a connection in the same packet
    // that completed it, before a handler attached after `connect()` resolves would exist.
    client.on('error', () => {
      if (this.listener === client) this.reconnectListener();
    });
    client.on('notification', (message) => {
      for (const listener of this.channels.get(message.channel) ?? []) listener(message.payload ?? '');
    });
    this.listenerReady = client.connect().then(() => client);
    this.listenerReady.catch(() => this.reconnectListener());
    return this.listenerReady;
  }

  private reconnectListener(): void {
    if (this.closed) return;
    const broken = this.listener;
    this.listener = null;
    void broken?.end().catch(() => undefined);
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
