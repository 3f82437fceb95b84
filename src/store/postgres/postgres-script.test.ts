import { describe, expect, it } from 'vitest';
import { eventually } from '../conformance/harness.ts';
import { PostgresDriver } from './postgres-driver.ts';
import { postgresSkipReason, postgresTestUrl } from './postgres-harness.ts';
import { literal } from './postgres-script.ts';

// pg's own escaping, as a connection does it (standard_conforming_strings on).
const client = {
  escapeLiteral: (text: string) => {
    const quoted = `'${text.replace(/'/g, "''").replace(/\\/g, '\\\\')}'`;
    return text.includes('\\') ? ` E${quoted}` : quoted;
  },
};

describe('a script value as a literal', () => {
  it('writes text, numbers, booleans, nothing and bytes as SQL literals', () => {
    expect(literal(client, "it's")).toBe("'it''s'");
    expect(literal(client, 'a \\ b')).toBe(" E'a \\\\ b'");
    expect(literal(client, 42)).toBe('42');
    expect(literal(client, -1.5)).toBe('-1.5');
    expect(literal(client, true)).toBe('TRUE');
    expect(literal(client, null)).toBe('NULL');
    expect(literal(client, undefined)).toBe('NULL');
    expect(literal(client, Buffer.from([0, 255]))).toBe(" E'\\\\x00ff'");
  });

  it('refuses what SQL cannot say', () => {
    expect(() => literal(client, Number.NaN)).toThrow(TypeError);
    expect(() => literal(client, { a: 1 })).toThrow(TypeError);
  });
});

describe.skipIf(postgresSkipReason() !== null)('PostgresDriver scripts', () => {
  async function withDriver(work: (driver: PostgresDriver) => Promise<void>): Promise<void> {
    const schema = `quarry_script_${Math.random().toString(36).slice(2, 8)}`;
    const driver = new PostgresDriver(postgresTestUrl!, { schema, maxConnections: 1 });
    try {
      await driver.connect();
      await driver.query(`CREATE SCHEMA ${schema}`);
      await driver.query('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, data BYTEA)');
      await work(driver);
    } finally {
      await driver.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await driver.close();
    }
  }

  it('runs the statements in order, each reading what the ones before it wrote, values kept exactly', async () => {
    await withDriver(async (driver) => {
      const body = `a quote ' and a backslash \\ and a semicolon; DROP TABLE notes; --`;
      const [inserted, read] = await driver.script([
        {
          sql: 'INSERT INTO notes (id, body, data) VALUES (?, ?, ?) RETURNING id',
          params: [1, body, Buffer.from([0, 1, 255])],
        },
        { sql: 'SELECT body, data FROM notes WHERE id = (SELECT MAX(id) FROM notes)', params: [] },
      ]);
      expect(inserted).toEqual([{ id: 1 }]);
      expect(read![0]!.body).toBe(body);
      expect([...(read![0]!.data as Buffer)]).toEqual([0, 1, 255]);
    });
  });

  it('prepares each statement once per connection', async () => {
    await withDriver(async (driver) => {
      const count = { sql: 'SELECT COUNT(*) AS n FROM pg_prepared_statements', params: [] };
      const insert = { sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', params: [1, 'one'] };
      const [, first] = await driver.script([insert, count]);
      const [, second] = await driver.script([{ ...insert, params: [2, 'two'] }, count]);
      expect(Number(first![0]!.n)).toBe(2);
      expect(Number(second![0]!.n)).toBe(2);
    });
  });

  it('lands all of a script or none of it, and the next script runs on a fresh connection', async () => {
    await withDriver(async (driver) => {
      await driver.script([{ sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', params: [1, 'kept'] }]);
      await expect(
        driver.script([
          { sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', params: [2, 'rolled back'] },
          { sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', params: [1, 'a duplicate key'] },
        ]),
      ).rejects.toMatchObject({ code: '23505' });
      const [rows] = await driver.script([{ sql: 'SELECT body FROM notes ORDER BY id', params: [] }]);
      expect(rows).toEqual([{ body: 'kept' }]);
    });
  });

  it('prepares again on a connection the server replaced', async () => {
    await withDriver(async (driver) => {
      const pid = { sql: 'SELECT pg_backend_pid() AS pid', params: [] };
      const [[before]] = (await driver.script([pid])) as [[{ pid: number }]];
      const observer = new PostgresDriver(postgresTestUrl!);
      try {
        await observer.query('SELECT pg_terminate_backend(?)', [before.pid]);
      } finally {
        await observer.close();
      }
      // The first script may meet the ended connection (and say so); the next one prepares anew.
      await eventually(async () => {
        const result = await driver.script([pid]).catch(() => null);
        return result !== null && Number(result[0]![0]!.pid) !== before.pid;
      });
    });
  });

  it('sends a notify statement’s payloads when the script commits', async () => {
    await withDriver(async (driver) => {
      const heard: string[] = [];
      driver.listen('notes', (payload) => heard.push(payload));
      await eventually(async () => {
        await driver.script([{ sql: "SELECT 'ready' AS payload", params: [], notify: 'notes' }]);
        return heard.includes('ready');
      });
      const [inserted, notified] = await driver.script([
        { sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', params: [7, "it's seven"] },
        { sql: 'SELECT body AS payload FROM notes WHERE id = ?', params: [7], notify: 'notes' },
      ]);
      expect([inserted, notified]).toEqual([[], []]);
      await eventually(() => heard.includes("it's seven"));
    });
  });
});
