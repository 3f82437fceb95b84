import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { QuarryError } from '../../shared/errors.ts';
import { eventually } from '../conformance/harness.ts';
import { PostgresDriver } from './postgres-driver.ts';
import { postgresSkipReason, postgresTestUrl } from './postgres-harness.ts';

/** One backend message: a type byte, a length that counts itself, the body. */
function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** Starts `server` on a free loopback port; resolves with a PostgreSQL URL pointing at it. */
function listening(server: net.Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve(`postgres://quarry@127.0.0.1:${port}/quarry`);
    });
  });
}

/** A server in its last moment: it completes each connection and ends it in the same packet. */
function serverThatShutsDownAsItAccepts(): Promise<{ url: string; accepted: () => number; close: () => void }> {
  let accepted = 0;
  const server = net.createServer((socket) => {
    socket.once('data', () => {
      accepted += 1;
      const authenticationOk = message('R', Buffer.from([0, 0, 0, 0]));
      const readyForQuery = message('Z', Buffer.from('I'));
      const fatal = message(
        'E',
        Buffer.from('SFATAL\0C57P01\0Mterminating connection due to administrator command\0\0', 'latin1'),
      );
      socket.end(Buffer.concat([authenticationOk, readyForQuery, fatal]));
    });
    socket.on('error', () => undefined);
  });
  return listening(server).then((url) => ({ url, accepted: () => accepted, close: () => server.close() }));
}

describe('PostgresDriver against a server shutting down', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('hears a connection ended in the packet that opened it, retries, and reports the outage', async () => {
    const server = await serverThatShutsDownAsItAccepts();
    cleanups.push(server.close);
    const driver = new PostgresDriver(server.url, { reconnectDelaysMs: [5, 5] });
    cleanups.push(() => driver.close());

    // Unheard, the connection's 'error' event would end the test process (vitest reports it as an
    // unhandled error and fails the run); heard, the read is sent again and finally reported.
    const failure = await driver.query('SELECT 1').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(QuarryError);
    expect(failure).toMatchObject({ code: 'STORE_UNAVAILABLE', isRetryable: true });
    expect(server.accepted()).toBe(3);

    const inTransaction = await driver.transaction((tx) => tx.query('SELECT 1')).catch((error: unknown) => error);
    expect(inTransaction).toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });
});

/** A server that lets each connection in, then never says another word (a silent partition). */
function serverThatGoesSilent(): Promise<{ url: string; heard: () => number; close: () => void }> {
  const sockets = new Set<net.Socket>();
  let heard = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('data', () => {
      socket.write(Buffer.concat([message('R', Buffer.from([0, 0, 0, 0])), message('Z', Buffer.from('I'))]));
      socket.on('data', () => (heard += 1));
    });
    socket.on('error', () => undefined);
  });
  return listening(server).then((url) => ({
    url,
    heard: () => heard,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  }));
}

describe('PostgresDriver against a server that stops answering', () => {
  it('closes anyway: a query left waiting on a silent connection is cut off, not waited for', async () => {
    const server = await serverThatGoesSilent();
    const driver = new PostgresDriver(server.url);
    try {
      await driver.connect();
      const unanswered = driver.query('SELECT 1').catch((error: unknown) => error);
      await eventually(() => server.heard() > 0);
      await driver.close();
      // Cut from this side: the query ends with the connection (and is not sent again: it is closed).
      expect(await unanswered).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    } finally {
      server.close();
    }
  });
});

describe.skipIf(postgresSkipReason() !== null)('PostgresDriver notifications, sent with COMMIT', () => {
  it('delivers a committed transaction’s notifications as written, quotes and backslashes included, and none of one rolled back', async () => {
    const schema = `quarry_notify_${Math.random().toString(36).slice(2, 8)}`;
    const driver = new PostgresDriver(postgresTestUrl!, { schema });
    const heard: string[] = [];
    try {
      await driver.connect();
      driver.listen('events', (payload) => heard.push(payload));
      // LISTEN is sent on the listener's own connection: wait until it hears a first notification.
      await eventually(async () => {
        await driver.transaction(async (tx) => tx.notify('events', 'ready'));
        return heard.includes('ready');
      });
      await expect(
        driver.transaction(async (tx) => {
          tx.notify('events', 'rolled back');
          throw new QuarryError('CONFLICT', 'refused inside the transaction');
        }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      const written = [`it's a quote`, 'a \\ backslash', "both \\' at once; COMMIT"];
      await driver.transaction(async (tx) => {
        await tx.query('SELECT 1');
        for (const payload of written) tx.notify('events', payload);
      });
      await eventually(() => heard.includes(written.at(-1)!));
      expect(heard.filter((payload) => payload !== 'ready')).toEqual(written);
    } finally {
      await driver.close();
    }
  });
  it('opens as many connections as asked before use, and none is left after close', async () => {
    const name = `quarry_open_${Math.random().toString(36).slice(2, 8)}`;
    const url = new URL(postgresTestUrl!);
    url.searchParams.set('application_name', name);
    const driver = new PostgresDriver(url.toString());
    const observer = new PostgresDriver(postgresTestUrl!);
    const open = async () =>
      Number(
        (
          await observer.query<{ n: number }>('SELECT COUNT(*) AS n FROM pg_stat_activity WHERE application_name = ?', [
            name,
          ])
        )[0]!.n,
      );
    try {
      await driver.connect(4);
      expect(await open()).toBe(4);
      await driver.close();
      await eventually(async () => (await open()) === 0);
    } finally {
      await driver.close();
      await observer.close();
    }
  });
});
