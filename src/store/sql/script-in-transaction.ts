import type { Row, ScriptStatement, SqlDriver } from './sql-driver.ts';

/**
 * `SqlDriver.script` for a database that runs a transaction in this process (SQLite): the
 * statements in order, in one transaction; a `notify` statement's payloads are sent on commit.
 */
export function scriptInTransaction(
  driver: Pick<SqlDriver, 'transaction'>,
  statements: readonly ScriptStatement[],
): Promise<Row[][]> {
  return driver.transaction(async (tx) => {
    const results: Row[][] = [];
    for (const statement of statements) {
      const rows = await tx.query(statement.sql, statement.params);
      if (statement.notify === undefined) results.push(rows);
      else {
        for (const row of rows) tx.notify(statement.notify, String(row.payload));
        results.push([]);
      }
    }
    return results;
  });
}
