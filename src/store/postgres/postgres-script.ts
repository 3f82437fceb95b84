import { createHash } from 'node:crypto';
import type { ClientBase } from 'pg';
import type { Row, ScriptStatement } from '../sql/sql-driver.ts';

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

/**
 * The statements each connection has prepared, by name. A connection a script failed on is ended,
 * never reused, so what it prepared goes with it; a new connection has prepared nothing.
 */
const preparedOn = new WeakMap<ClientBase, Set<string>>();

/** Past this many on one connection, its prepared statements are dropped and prepared again as used. */
const PREPARED_LIMIT = 500;

/** A value as an SQL literal for `EXECUTE`, which takes expressions, not bound values. */
export function literal(client: Pick<ClientBase, 'escapeLiteral'>, value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`A script cannot send the number ${value}.`);
    return String(value);
  }
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'string') return client.escapeLiteral(value);
  // bytea's hex input form, which the prepared statement's bytea parameter reads.
  if (value instanceof Uint8Array) return client.escapeLiteral(`\\x${Buffer.from(value).toString('hex')}`);
  throw new TypeError(`A script cannot send a value of type ${typeof value}.`);
}

/** Each statement's text as prepared and its name (a hash of that text), by its SQL and channel. */
const texts = new Map<string, { name: string; text: string }>();
/** Statements are a few dozen shapes; texts built per call (a count of events) stay bounded too. */
const TEXTS_LIMIT = 2_000;

function preparable(
  client: Pick<ClientBase, 'escapeLiteral'>,
  statement: ScriptStatement,
  channelName: (channel: string) => string,
): { name: string; text: string } {
  const channel = statement.notify === undefined ? undefined : channelName(statement.notify);
  const cacheKey = channel === undefined ? statement.sql : `${channel}\n${statement.sql}`;
  let entry = texts.get(cacheKey);
  if (entry) return entry;
  const sql = toPostgresPlaceholders(statement.sql);
  const text =
    channel === undefined
      ? sql
      : `SELECT pg_notify(${client.escapeLiteral(channel)}, notified.payload) FROM (${sql}) AS notified`;
  entry = { name: `quarry_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text };
  if (texts.size < TEXTS_LIMIT) texts.set(cacheKey, entry);
  return entry;
}

/**
 * Runs a script (`SqlDriver.script`) on `client` in one round trip: one simple query that prepares
 * the statements this connection has not prepared yet, then BEGIN, an EXECUTE of each with its
 * values as literals, and COMMIT. Each statement runs on its cached plan, and, as READ COMMITTED
 * gives each statement of a transaction its own snapshot, sees what committed before it began. A
 * `notify` statement's payloads go out through `pg_notify`, which PostgreSQL sends on commit.
 */
export async function runScript(
  client: ClientBase,
  statements: readonly ScriptStatement[],
  channelName: (channel: string) => string,
): Promise<Row[][]> {
  if (statements.length === 0) return [];
  let prepared = preparedOn.get(client);
  const parts: string[] = [];
  if (!prepared || prepared.size > PREPARED_LIMIT) {
    if (prepared) parts.push('DEALLOCATE ALL');
    prepared = new Set();
  }
  const preparing = new Set<string>();
  const names = statements.map((statement) => {
    const { name, text } = preparable(client, statement, channelName);
    if (!prepared.has(name) && !preparing.has(name)) {
      preparing.add(name);
      parts.push(`PREPARE ${name} AS ${text}`);
    }
    return name;
  });
  const first = parts.length + 1;
  parts.push('BEGIN');
  statements.forEach((statement, index) => {
    const values = statement.params.map((value) => literal(client, value));
    parts.push(`EXECUTE ${names[index]}${values.length > 0 ? `(${values.join(', ')})` : ''}`);
  });
  parts.push('COMMIT');
  const results = (await client.query(parts.join(';\n'))) as unknown as Array<{ rows: Row[] }>;
  for (const name of preparing) prepared.add(name);
  preparedOn.set(client, prepared);
  return statements.map((statement, index) => (statement.notify === undefined ? results[first + index]!.rows : []));
}
